import Values
import Rule

/// A due user (or one contact of theirs) left out for bad data, with the reason recorded in
/// `notification_logs.last_error`.
package struct SkippedUser: Sendable {
    /// `users.id`.
    package let userID: String
    /// The contact left out (the address as stored, trimmed and lower-cased: the row's key); empty
    /// when the whole user is skipped.
    package let contact: String
    /// `m`.
    package let missedDays: Int
    /// `L`.
    package let lastCheckIn: CalendarDate
    /// Which check failed (`invalid_email`, `invalid_name`, `superseded`).
    package let decision: Decision
    /// Why, in words (never the full address).
    package let reason: String
    /// The newer account's id (for `superseded`).
    package let newerAccount: String?

    /// Creates the value.
    package init(userID: String, missedDays: Int, lastCheckIn: CalendarDate, decision: Decision, reason: String,
                 newerAccount: String? = nil, contact: String = "") {
        self.contact = contact
        self.newerAccount = newerAccount
        self.userID = userID
        self.missedDays = missedDays
        self.lastCheckIn = lastCheckIn
        self.decision = decision
        self.reason = reason
    }
}
