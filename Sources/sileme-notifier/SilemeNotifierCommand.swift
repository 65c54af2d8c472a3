import Admin
import ArgumentParser
import Config
import Daemon
import Delivery
import Foundation
import Output
import Reports
import Rule
import Store
import Values

/// `sileme-notifier`: the daemon, a one-shot run, the dry-run report (all in `RunCommand`, the
/// default subcommand), `migrate`, `check`, `report` and `retry`.
@main
struct SilemeNotifierCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sileme-notifier",
        abstract: "Tells a user's emergency contacts when the user misses check-ins (一键打卡), by mail and signed webhooks.",
        discussion: """
            Invocations:
              sileme-notifier
                  the daemon (what the systemd unit runs): each user at their own time
              sileme-notifier --run-now [--at INSTANT | --date D]
                  one run, then exit: each user on their own run date now (or at
                  INSTANT), or everyone on D
              sileme-notifier --run-now --dry-run [--at INSTANT | --date D]
                              [--format table|json|csv] [--full-emails]
                              [--preview USER_ID]
                  the admin report: who would be told and why; writes and sends nothing
              sileme-notifier migrate | check | report | retry | release
                              | introduce | bounces
                  see `sileme-notifier help <subcommand>`
            `sileme-notifier help run` lists the options of the first three forms.

            Each user is served at their own notify time (users.time_zone and notify_time, or NOTIFY_TIME in NOTIFY_TIME_ZONE), on their own run date D: their latest check-in L before D gives the consecutive missed days m = (D - L) - 1. Users with MISS_THRESHOLD_DAYS <= m <= MISS_THRESHOLD_DAYS + CATCH_UP_DAYS who were not told in this streak get one alert to each of their contacts (emergency_contacts, up to five, each in their language; the second tier later if nobody answers) and, with WEBHOOK_URL, one signed webhook event; users beyond that window are reported as stale and never mailed. Around the alert: introductions of new contacts, an all-clear when the user checks in, "I'm on it" from the page, bounces read from the relay, escalation when nobody answers, alerts held over an outage of the app, fallback relays and a canary through each.

            Configuration: a KEY=VALUE file (--config; default /etc/sileme-notifier/notifier.conf when it exists). Every key can be overridden by an environment variable of the same name. Secrets may also come from KEY_FILE or a systemd credential. Every setting, its default and what it takes: the CONFIGURATION section of sileme-notifier(8), or docs/configuration.md (/usr/share/doc/sileme-notifier/docs/configuration.md when installed from the package).

            Exit codes: 0 success; 75 some mails failed and will be retried; 69 database or mail server unreachable; 78 configuration error (the message names the setting); 64 invalid arguments; 1 anything else.
            """,
        version: NotifierVersion.current,
        subcommands: [RunCommand.self, MigrateCommand.self, CheckCommand.self, ReportCommand.self, RetryCommand.self, ReleaseCommand.self,
                      IntroduceCommand.self, BouncesCommand.self],
        defaultSubcommand: RunCommand.self)
}

/// The default subcommand: the daemon, `--run-now`, and the dry-run report.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The daemon (no options), one run (--run-now), or the dry-run report (--run-now --dry-run). The default subcommand.")

    @OptionGroup var common: CommonOptions

    @Flag(name: .long, help: "Run once, then exit: each user on their own run date now (or at --at), or everyone on --date. Without it, sileme-notifier is the daemon: it serves each user at their own notify time (their time_zone and notify_time, or NOTIFY_TIME in NOTIFY_TIME_ZONE), catches up what it missed, retries failed messages until the next instant, and speaks systemd's notify protocol (SIGTERM stops, SIGHUP reloads).")
    var runNow = false

    @Flag(name: .long, help: "With --run-now: print who would be mailed and why; write nothing, send nothing.")
    var dryRun = false

    @OptionGroup var dates: SendingDateOptions

    @Option(name: .long, help: "Dry-run report format: table, json or csv.")
    var format: ReportFormat = .table

    @Flag(name: .long, help: "Show contact emails in full in the dry-run report (masked by default).")
    var fullEmails = false

    @Option(name: .long, help: "With --run-now --dry-run: only the users whose days are counted in this zone (an IANA name, e.g. America/Los_Angeles; users with no zone or an unknown one are counted in NOTIFY_TIME_ZONE).")
    var zone: String?

    @Option(name: .long, help: "With --run-now --dry-run: print the exact message (headers and body) USER_ID's contact would receive on the run date, and the rule's verdict and the user's contacts on standard error.")
    var preview: String?

    @Option(name: .long, help: "With --preview: the kind of message: alert (default), all_clear, follow_up, introduction, acknowledged, escalation, outcome_ok or outcome_unreachable.")
    var kind: String = "alert"

    @Option(name: .long, help: "With --preview: the contact in force to address, 1 (default) to 5, in serving order.")
    var contact: Int = 1

    func validate() throws {
        if dryRun && !runNow { throw ValidationError("--dry-run needs --run-now") }
        if zone != nil && (!dryRun || preview != nil) { throw ValidationError("--zone needs --run-now --dry-run") }
        if let zone, TimeZone(identifier: zone) == nil { throw ValidationError("--zone must be an IANA zone name such as Europe/London (got \"\(zone)\")") }
        if !runNow && (dates.date != nil || dates.at != nil || fullEmails || dates.allowFutureDate) {
            throw ValidationError("--date, --at, --allow-future-date and --full-emails need --run-now")
        }
        if preview != nil && !dryRun { throw ValidationError("--preview needs --run-now --dry-run") }
        if DeliveryJob.Kind(rawValue: kind).map({ DeliveryJob.Kind.mailed.contains($0) }) != true {
            throw ValidationError("--kind must be one of \(DeliveryJob.Kind.mailed.map(\.rawValue).joined(separator: ", ")) (got \"\(kind)\")")
        }
        if preview == nil && (kind != "alert" || contact != 1) { throw ValidationError("--kind and --contact need --preview") }
    }

    func run() throws {
        guard runNow else { return try runDaemon() }
        let configuration = try common.loadConfiguration()
        let logger = LoggingSetup.bootstrap(interactive: true)
        // The dry run and --preview look at any date; a run that sends refuses a date after today.
        let when = try dates.when(for: configuration, sending: !dryRun)
        try Console.exitOnFailure {
            if let preview {
                // The user's own run date at the instant (their slot's), or --date's.
                let runDate = try SlotRuns.runDate(of: preview, at: when, configuration: configuration)
                do {
                    let result = try MessagePreview.make(configuration: configuration, userID: preview, runDate: runDate,
                                                         kind: DeliveryJob.Kind(rawValue: kind) ?? .alert, contact: contact)
                    Console.error("preview for \(preview) on \(runDate): \(result.verdict)")
                    if let message = result.message { FileHandle.standardOutput.write(Data(message)) }
                    return .success
                } catch let error as PreviewError {
                    Console.error("sileme-notifier: --preview: \(error)")
                    return .usage
                }
            }
            if dryRun {
                let output = TextOutput()
                let sink: any ReportSink = switch format {
                case .json: JSONReportWriter(output: output, fullEmails: fullEmails)
                case .csv: CSVReportWriter(output: output, fullEmails: fullEmails)
                case .table: TableReportWriter(output: output, fullEmails: fullEmails)
                }
                let dryRun = DryRun(configuration: configuration, when: when, zone: zone.flatMap(TimeZone.init(identifier:)))
                let counts = try dryRun.write(into: sink)
                Console.error("dry run for \(dryRun.described): \(counts.due) would be sent, \(counts.alreadyNotified) already notified, "
                              + "\(counts.stale) stale, \(counts.invalidEmail) invalid email, \(counts.invalidName) invalid name"
                              + (counts.held > 0 ? ", \(counts.held) held over an intake gap" : "")
                              + (counts.guardsText.map { ", " + $0 } ?? ""))
                return .success
            }
            // SIGTERM/SIGINT: finish the mails in flight, leave the rest due, exit.
            let stop = StopSignal()
            SignalHandlers.install(stop: stop)
            // One run at a time per database (the daemon, timers and other hosts included).
            guard let lock = try Console.takeRunLock(configuration, stop: stop, logger: logger, otherwise: "nothing was sent") else { return .tempFailure }
            defer { lock.release() }
            // One run per run date, latest first; the exit status is the most serious one's.
            return try InstantRuns.once(when, configuration: configuration, logger: logger, stop: stop)
        }
    }
}

extension RunCommand {
    /// The daemon: runs until SIGTERM/SIGINT; SIGHUP reloads the configuration.
    func runDaemon() throws {
        let configuration = try common.loadConfiguration()
        let logger = LoggingSetup.bootstrap(interactive: isatty(STDERR_FILENO) != 0)
        let loader = common.loader
        try Console.exitOnFailure {
            let stop = StopSignal()
            let daemon = try Daemon(configuration: configuration, reloadConfiguration: { () throws(ConfigurationError) in
                try CommonOptions.load(loader)
            }, logger: logger, stop: stop)
            SignalHandlers.install(stop: stop, reload: daemon.requestReload)
            return daemon.run()
        }
    }
}

/// The dry-run report formats.
enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}
