import Values

/// The user of a per-user history report, as the `users` table has them now.
public struct UserProfile: Sendable, Equatable {
    /// `users.id`.
    public let userID: String
    /// The name, control characters replaced (see `Printable.text`).
    public let name: String
    /// The current emergency contact address: masked unless the report shows full emails.
    public let contactEmail: String
}
