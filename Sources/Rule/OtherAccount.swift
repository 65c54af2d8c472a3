import Values

/// Another user with the same emergency contact address (trimmed, case-insensitive) as a listed
/// user: the rule decides whether it is the same person's newer account (`superseded`).
public struct OtherAccount: Sendable, Equatable {
    /// `users.id` of the other account.
    public var userID: String
    /// Its `users.name` as stored.
    public var rawName: String?
    /// Its latest check-in the rule trusts on the run date (dated at most `D + 1`); nil when none.
    public var lastCheckIn: CalendarDate?

    /// Creates the value.
    public init(userID: String, rawName: String?, lastCheckIn: CalendarDate?) {
        self.userID = userID
        self.rawName = rawName
        self.lastCheckIn = lastCheckIn
    }
}
