/// The notification rows of a period with one value of consecutive missed days `m` at notification
/// time (`notification_logs.consecutive_miss_days`): one bar of the distribution.
package struct MissDaysCount: Sendable, Equatable {
    /// `m`.
    package let missedDays: Int
    /// Rows whose mail the server accepted (`email_sent`).
    package var sent: Int
    /// Rows whose mail was not (or not yet) accepted: failed, retry, sending, skipped.
    package var notSent: Int

    /// All rows with this `m`.
    package var count: Int { sent + notSent }
}
