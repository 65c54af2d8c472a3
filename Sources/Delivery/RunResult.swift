import Values
import Store

/// The outcome of a real run, and the exit status it means (docs/interfaces.md).
package struct RunResult: Sendable {
    /// `notifier_runs.id`.
    package let runID: Int64
    /// The counts.
    package let counts: RunTally
    /// Failures that stopped part of the run (database lost, transport could not start), in words.
    package let errors: [String]
    /// The database connection broke during the run.
    package let databaseLost: Bool
    /// Nothing could be sent because the mail server was unusable.
    package let mailServerUnavailable: Bool

    /// 69 when the database or the mail server could not be used, 75 when some mails failed and
    /// will be retried, 1 for any other failure, 0 otherwise.
    package var exitStatus: ExitStatus {
        if databaseLost || mailServerUnavailable { return .unavailable }
        if !errors.isEmpty { return .failure }
        if counts.failed > 0 || counts.eventsFailed > 0 { return .tempFailure }
        return .success
    }
}
