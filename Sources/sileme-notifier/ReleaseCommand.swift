import ArgumentParser
import Delivery
import Foundation
import Store
import Values

/// `sileme-notifier release [--date D]`: the alerts held over an intake gap go out now
/// (docs/intake-hold.md) — the operator has decided the gap was not the app's outage, or does not
/// want to wait for the hold's end. Users who checked in meanwhile are not mailed.
struct ReleaseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release",
        abstract: "Send the alerts held over an intake gap now (all, or those first held on one run date).",
        discussion: """
            Ends the holds, then runs every user at their own run date now, as --run-now does (with --date: on that date, \
            as --run-now --date): the released alerts go out, except to users who checked in meanwhile. Exit codes as for --run-now.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "Only the alerts first held on this run date (YYYY-MM-DD); the run that sends them is of that date.")
    var date: String?

    func validate() throws {
        if let date, CalendarDate(parsing: date) == nil { throw ValidationError("--date must be a real date as YYYY-MM-DD (got \"\(date)\")") }
    }

    func run() throws {
        let configuration = try common.loadConfiguration()
        let logger = LoggingSetup.bootstrap(interactive: true)
        try Console.exitOnFailure {
            let stop = StopSignal()
            SignalHandlers.install(stop: stop)
            guard let lock = try Console.takeRunLock(configuration, stop: stop, logger: logger, otherwise: "nothing was released") else { return .tempFailure }
            defer { lock.release() }
            let who = "release by \(ProcessInfo.processInfo.userName)@\(ProcessInfo.processInfo.hostName)"
            let released = try HoldStore.release(PGConnection(configuration.database), runDate: date.flatMap { CalendarDate(parsing: $0) }, by: who)
            guard released > 0 else {
                Console.error("no alert is held" + (date.map { " from \($0)" } ?? "") + "; nothing to release")
                return .success
            }
            logger.notice("the held alerts of \(released) user(s) released (\(who)); running now")
            let when: RunWhen = date.flatMap { CalendarDate(parsing: $0) }.map { .date($0) } ?? .instant(Date())
            return try InstantRuns.once(when, configuration: configuration, logger: logger, stop: stop)
        }
    }
}
