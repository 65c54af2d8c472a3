import Rule
import Store

/// What one job came to in the dispatcher (the tally's own outcomes).
package typealias JobOutcome = RunTally.Outcome

/// The dispatcher's result, shared by its workers under a lock: the messages' outcomes counted
/// into the run's one tally, and the working state a delivery needs beside it.
package struct DeliveryResult: Sendable {
    /// Every outcome, counted (the run adds the plan's decisions to the same tally).
    package var tally = RunTally()
    /// Messages in a row that failed because the server (or webhook endpoint) was unusable, per
    /// channel (drives each channel's give-up limit).
    package var consecutiveUnavailable: [DeliveryJob.Channel: Int] = [:]
    /// Jobs never claimed because the run was asked to stop (still due; the next run takes them).
    package var notStarted = 0
    /// Why the contacts of some accepted messages were not marked `ok` in `contact_status` (the
    /// recorder marks them in batches as their outcomes are written: `ResultRecorder`).
    package var contactsNotMarked: (any Error)?
    /// Worker failures (database lost, transport could not be created).
    package var errors: [any Error] = []

    /// Jobs handled so far, whatever the outcome.
    package var handled: Int { tally.handled }

    /// Counts one job's outcome.
    package mutating func add(_ outcome: JobOutcome, kind: DeliveryJob.Kind = .alert, channel: DeliveryJob.Channel = .email) {
        tally.count(outcome, kind: kind, channel: channel)
    }
}
