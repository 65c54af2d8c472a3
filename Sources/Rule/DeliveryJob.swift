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

    /// Creates the value.
    package init(userID: String, name: DisplayName, email: EmailAddress, missedDays: Int, lastCheckIn: CalendarDate) {
        self.userID = userID
        self.name = name
        self.email = email
        self.missedDays = missedDays
        self.lastCheckIn = lastCheckIn
    }
}
