/// How a streak of missed days ended up, as the per-user report judges it.
package enum StreakOutcome: String, Sendable, Equatable, CaseIterable {
    /// A mail of the streak was accepted by the mail server.
    case notified
    /// The streak has notification rows, but none was accepted (failed, retry, stuck, skipped).
    case notSent = "not_sent"
    /// The streak never reached the threshold before it ended (or before the report's last day):
    /// no mail was due.
    case notDue = "not_due"
    /// A mail was due but nothing was recorded at all (no run while it was due, a stale streak, or a
    /// streak older than the notifier).
    case noRecord = "no_record"
    /// No mail was sent because the user's newer account (same contact and name) checked in:
    /// the streak's latest row is a `superseded` skip.
    case superseded
    /// The user's pause (`paused_until`, as it is now) covers the streak's due days: no mail was due.
    case paused
}
