import ArgumentParser
import Config
import Delivery
import Foundation
import Rule
import Values
import Webhook

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "The configuration file (KEY=VALUE lines). Default: /etc/sileme-notifier/notifier.conf if it exists; SILEME_CONFIG also names it.")
    var config: String?

    /// The loader for this invocation: `--config`, else `SILEME_CONFIG`, else the default file
    /// when it exists; the process environment on top.
    var loader: ConfigurationLoader {
        let environment = ProcessInfo.processInfo.environment
        let defaultPath = "/etc/sileme-notifier/notifier.conf"
        let path = config ?? environment["SILEME_CONFIG"]
            ?? (FileManager.default.fileExists(atPath: defaultPath) ? defaultPath : nil)
        return ConfigurationLoader(environment: environment, filePath: path)
    }

    /// Loads the configuration, or ends the program with exit code 78 and the setting named.
    func loadConfiguration() throws -> NotifierConfiguration {
        do {
            return try Self.load(loader)
        } catch {
            Console.error("sileme-notifier: \(error)")
            throw ExitCode(ExitStatus.configuration.rawValue)
        }
    }

    /// What `loader` reads, and what only a rendering can check: that the webhook body template
    /// renders JSON (at start and at every reload, as the rest of the configuration).
    static func load(_ loader: ConfigurationLoader) throws(ConfigurationError) -> NotifierConfiguration {
        let configuration = try loader.load()
        try WebhookBodyTemplate.check(configuration.webhook, appName: configuration.appName)
        return configuration
    }
}

/// `--date` and `--allow-future-date` of the commands that send (`--run-now`, `retry`).
struct SendingDateOptions: ParsableArguments {
    @Option(name: .long, help: "The run date D as YYYY-MM-DD, for every user whatever their own time (default: each user's own run date now; for retry, today in NOTIFY_TIME_ZONE). A date after today is refused (exit 64) unless --allow-future-date; the dry run takes any date.")
    var date: String?

    @Option(name: .long, help: "Evaluate as of this instant (RFC 3339, e.g. 2026-01-13T09:00:00+08:00): each user's run date is the date of their latest notify instant at or before it — their own time_zone and notify_time, or NOTIFY_TIME in NOTIFY_TIME_ZONE (before 09:00, the day before). An instant in the future is refused when sending (exit 64); the dry run takes any.")
    var at: String?

    @Flag(name: .long, help: "Accept a --date after today in NOTIFY_TIME_ZONE when sending (a typo there mails everyone who checked in today).")
    var allowFutureDate = false

    func validate() throws {
        if let date, CalendarDate(parsing: date) == nil { throw ValidationError("--date must be a real date as YYYY-MM-DD (got \"\(date)\")") }
        if date != nil && at != nil { throw ValidationError("--date and --at name the run date two ways: give one") }
        if let at, Self.instant(at) == nil {
            throw ValidationError("--at must be an RFC 3339 instant with its offset, as 2026-01-13T09:00:00+08:00 or 2026-01-13T01:00:00Z (got \"\(at)\")")
        }
    }

    /// `text` as an RFC 3339 instant (`Z` or a numeric offset; fractional seconds allowed; `t`
    /// and `z` in lower case too, as RFC 3339 allows).
    static func instant(_ text: String) -> Date? {
        let text = text.uppercased()
        let whole = ISO8601DateFormatter()
        whole.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return whole.date(from: text) ?? fractional.date(from: text)
    }

    /// When the run is: `--date`'s date (everyone on it), or the instant of `--at` or now (each
    /// user on the date of their own latest notify instant, docs/user-time.md). A future one is
    /// refused when sending (64).
    func when(for configuration: NotifierConfiguration, sending: Bool, now: Date = Date()) throws -> RunWhen {
        if date != nil { return .date(try runDate(in: configuration.timeZone, sending: sending, now: now)) }
        guard let at, let instant = Self.instant(at) else { return .instant(now) }
        try refuseFuture(instant, sending: sending, now: now)
        return .instant(instant)
    }

    private func refuseFuture(_ instant: Date, sending: Bool, now: Date) throws {
        if sending && instant > now {
            Console.error("sileme-notifier: --at \(at ?? "") is in the future: nothing was sent or written. Use --run-now --dry-run "
                          + "to look ahead.")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
    }

    /// The run date of `--at`, `--date`, or today, for `configuration`'s zone and notify time.
    func runDate(for configuration: NotifierConfiguration, sending: Bool, now: Date = Date()) throws -> CalendarDate {
        guard let at, let instant = Self.instant(at) else { return try runDate(in: configuration.timeZone, sending: sending, now: now) }
        try refuseFuture(instant, sending: sending, now: now)
        return configuration.schedule.latestFire(atOrBefore: instant).date
    }

    /// The run date: `--date`, or today in the service zone. When `sending`, a date after today
    /// there is refused (exit 64, after telling why) unless `--allow-future-date`; it is checked
    /// after the configuration is loaded, since the zone is a setting.
    func runDate(in zone: TimeZone, sending: Bool, now: Date = Date()) throws -> CalendarDate {
        let today = CalendarDate(now, in: zone)
        let runDate = date.flatMap { CalendarDate(parsing: $0) } ?? today
        if sending && runDate > today && !allowFutureDate {
            Console.error("sileme-notifier: --date \(runDate) is after today (\(today) in \(zone.identifier)): nothing was sent or "
                          + "written. Everyone who checked in since \(today) would count as missing. Use --run-now --dry-run to "
                          + "look ahead, or --allow-future-date if this is really meant.")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        return runDate
    }
}
