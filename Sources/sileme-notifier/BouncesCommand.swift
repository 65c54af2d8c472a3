import ArgumentParser
import Delivery
import Foundation
import Store
import Values

/// `sileme-notifier bounces`: reads the bounce mailbox once, as the daemon does every
/// `BOUNCE_POLL_SECONDS` (docs/bounces.md) — for an operator who wants the reports applied now,
/// and for a site that runs the notifier from a timer rather than as the daemon.
struct BouncesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bounces",
        abstract: "Read the bounce mailbox once: apply the reports, keep aside what cannot be used, say the counts.",
        discussion: """
            Needs BOUNCE_ADDRESS and BOUNCE_MAILBOX. A report of a dead address marks its delivery row bounced and the \
            contact undeliverable; each message is removed only after its effect is committed; one that names no row of \
            ours, or is not a report, is kept aside (a Maildir's .Unparsed folder). Exit codes: 0 read; 69 the mailbox or \
            the database could not be reached; 78 BOUNCE_ADDRESS is not set.
            """)

    @OptionGroup var common: CommonOptions

    func run() throws {
        let configuration = try common.loadConfiguration()
        let logger = LoggingSetup.bootstrap(interactive: true)
        try Console.exitOnFailure {
            guard let bounce = configuration.bounce else {
                Console.error("sileme-notifier: BOUNCE_ADDRESS is not set: there is no bounce mailbox to read")
                return .configuration
            }
            let stop = StopSignal()
            SignalHandlers.install(stop: stop)
            let reader = BounceReader(settings: bounce, database: configuration.database, logger: logger)
            let tally: BounceReader.Tally
            do { tally = try reader.poll(stop: stop) } catch let error as DatabaseError {
                throw error
            } catch {
                Console.error("sileme-notifier: cannot read the bounce mailbox \(bounce.mailbox): \(error)")
                return .unavailable
            }
            // A summary, not a report: standard error, as every command's summary.
            Console.error("bounces: " + BounceReader.summary(tally))
            return .success
        }
    }
}
