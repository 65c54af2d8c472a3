import Values

/// One mail the rule decided to send: who, to whom, and the numbers the template shows.
public struct DeliveryJob: Sendable {
    /// `users.id`.
    public let userID: String
    /// The cleaned name.
    public let name: DisplayName
    /// The validated contact address.
    public let email: EmailAddress
    /// `m`.
    public let missedDays: Int
    /// `L`.
    public let lastCheckIn: CalendarDate
    /// The end of a pause the missed days are counted from (`L' = paused_until > L`); nil when
    /// they are counted from `L`. The mail says what happened.
    public let pausedUntil: CalendarDate?

    /// `L'`: the day the missed days are counted from (the claim re-checks against it).
    public var countedFrom: CalendarDate { pausedUntil ?? lastCheckIn }

    /// Creates the value.
    package init(userID: String, name: DisplayName, email: EmailAddress, missedDays: Int, lastCheckIn: CalendarDate,
                 pausedUntil: CalendarDate? = nil) {
        self.userID = userID
        self.name = name
        self.email = email
        self.missedDays = missedDays
        self.lastCheckIn = lastCheckIn
        self.pausedUntil = pausedUntil
    }
}
