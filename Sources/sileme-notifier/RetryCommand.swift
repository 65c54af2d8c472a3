import Admin
import ArgumentParser
import Delivery
import Foundation
import Output
import Rule
import Store
import Values

/// `sileme-notifier retry`: re-attempts failed or stuck notifications of a run date now, through
/// the same claim → send → record path as a run (never a second mail for a streak that got one).
struct RetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Re-attempt failed or stuck notifications now (permanent and transient failures, claims of crashed runs).",
        discussion: "Users who checked in since, or whose streak was notified meanwhile, are not mailed. Exit codes as for --run-now.")

    @OptionGroup var common: CommonOptions

    @OptionGroup var dates: SendingDateOptions

    @Option(name: .long, help: "Only this user's notification.")
    var user: String?

    @Option(name: .long, help: "Only messages of this kind: alert, all_clear, follow_up or introduction (repeatable; default: every kind).")
    var kind: [String] = []

    @Flag(name: .long, help: "Show what would be retried; send and write nothing.")
    var dryRun = false

    @Flag(name: .long, help: "With --dry-run: print JSON instead of a table.")
    var json = false

    func validate() throws {
        if let user, UUID(uuidString: user) == nil { throw ValidationError("--user must be a user id (UUID) (got \"\(user)\")") }
        if json && !dryRun { throw ValidationError("--json needs --dry-run") }
        for name in kind where DeliveryJob.Kind(rawValue: name) == nil {
            throw ValidationError("--kind must be alert, all_clear, follow_up or introduction (got \"\(name)\")")
        }
    }

    func run() throws {
        let configuration = try common.loadConfiguration()
        let logger = LoggingSetup.bootstrap(interactive: true)
        let runDate = try dates.runDate(for: configuration, sending: !dryRun)
        try Console.exitOnFailure {
            let kinds = kind.isEmpty ? nil : kind.compactMap(DeliveryJob.Kind.init(rawValue:))
            let plan = try RetryPlan.make(configuration: configuration, runDate: runDate, userID: user?.lowercased(), logger: logger,
                                          kinds: kinds)
            if dryRun {
                let output = TextOutput()
                output.write(json ? RetryPlanFormat.json(plan, runDate: runDate) : RetryPlanFormat.table(plan, runDate: runDate))
                output.flush()
                return .success
            }
            guard !plan.usersToSend.isEmpty else {
                Console.error("nothing to retry for \(runDate): \(plan.entries.count) failed or stuck, none still due")
                return .success
            }
            let stop = StopSignal()
            SignalHandlers.install(stop: stop)
            guard let lock = try Console.takeRunLock(configuration, stop: stop, logger: logger, otherwise: "nothing was retried") else { return .tempFailure }
            defer { lock.release() }
            let run = NotificationRun(configuration: configuration, runDate: runDate, mode: .retry, logger: logger,
                                      onlyUsers: plan.usersToSend, onlyKinds: kinds.map(Set.init))
            return try run.execute(control: RunControl(stop: stop)).exitStatus
        }
    }
}
