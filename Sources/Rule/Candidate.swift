import Values

/// One user as the batch query returns them: someone whose latest check-in before the run date
/// is at least `threshold` days back and who has not checked in on or after the run date.
public struct Candidate: Sendable, Equatable {
    /// `users.id` (a UUID in the app's schema; kept as text).
    public var userID: String
    /// `users.name` as stored (may be NULL in a hand-made database).
    public var rawName: String?
    /// `users.emergency_email` as stored.
    public var rawEmail: String?
    /// `L`: the latest `check_in_date` before the run date.
    public var lastCheckIn: CalendarDate
    /// True when a `notification_logs` row dated after `L` has `email_sent = true`.
    public var notifiedInStreak: Bool

    /// Creates a candidate.
    public init(userID: String, rawName: String?, rawEmail: String?, lastCheckIn: CalendarDate, notifiedInStreak: Bool) {
        self.userID = userID
        self.rawName = rawName
        self.rawEmail = rawEmail
        self.lastCheckIn = lastCheckIn
        self.notifiedInStreak = notifiedInStreak
    }
}
