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
}
