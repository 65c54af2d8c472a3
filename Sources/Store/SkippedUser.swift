import Values
import Rule

/// A due user left out for bad data, with the reason recorded in `notification_logs.last_error`.
public struct SkippedUser: Sendable {
    /// `users.id`.
    public let userID: String
    /// `m`.
    public let missedDays: Int
    /// `L`.
    public let lastCheckIn: CalendarDate
    /// Which check failed (`invalid_email` / `invalid_name`).
    public let decision: Decision
    /// Why, in words (never the full address).
    public let reason: String

    /// Creates the value.
    package init(userID: String, missedDays: Int, lastCheckIn: CalendarDate, decision: Decision, reason: String) {
        self.userID = userID
        self.missedDays = missedDays
        self.lastCheckIn = lastCheckIn
        self.decision = decision
        self.reason = reason
    }
}
