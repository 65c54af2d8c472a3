import Values

/// Another user with the same emergency contact address (trimmed, case-insensitive) as a listed
/// user: the rule decides whether it is the same person's newer account (`superseded`).
package struct OtherAccount: Sendable, Equatable {
    /// `users.id` of the other account.
    package var userID: String
    /// Its `users.name` as stored.
    package var rawName: String?
    /// Its latest check-in the rule trusts on the run date (dated at most `D + 1`); nil when none.
    package var lastCheckIn: CalendarDate?

    /// Creates the value.
    package init(userID: String, rawName: String?, lastCheckIn: CalendarDate?) {
        self.userID = userID
        self.rawName = rawName
        self.lastCheckIn = lastCheckIn
    }
}
