import ArgumentParser
import Store

/// `sileme-notifier introduce --existing`: asks the next run to introduce the contacts that were
/// already named when the lifecycle was first migrated (they are recorded as known, not mailed).
struct IntroduceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "introduce",
        abstract: "Introduce contacts that existed before introductions did (sent by the next run).",
        discussion: """
            A contact named for the first time gets one introduction (INTRODUCE_CONTACTS=on, the default). The (user, contact) pairs that existed when `migrate` first added introductions are recorded as known and not mailed; `introduce --existing` marks them for introduction by the next run (the daemon's daily run, --run-now or retry). With --include-skipped, pairs skipped while INTRODUCE_CONTACTS was off, or whose introduction failed for good, are introduced again too.
            """)

    @OptionGroup var common: CommonOptions

    @Flag(name: .long, help: "Mark the pairs known at the upgrade for introduction (required: says what you mean).")
    var existing = false

    @Flag(name: .long, help: "With --existing: also the pairs skipped earlier (INTRODUCE_CONTACTS=off, refused addresses).")
    var includeSkipped = false

    func validate() throws {
        if !existing { throw ValidationError("say --existing to introduce the contacts known at the upgrade") }
    }

    func run() throws {
        let configuration = try common.loadConfiguration()
        try Console.exitOnFailure {
            let db = try PGConnection(configuration.database)
            let marked = try LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
                .introduceExisting(db, includeSkipped: includeSkipped)
            Console.error("\(marked) contact(s) will be introduced by the next run"
                          + (configuration.introduceContacts ? "" : " (INTRODUCE_CONTACTS is off: turn it on first)"))
            return .success
        }
    }
}
