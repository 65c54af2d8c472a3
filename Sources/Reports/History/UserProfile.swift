import Values

/// The user of a per-user history report, as the `users` table has them now.
package struct UserProfile: Sendable, Equatable {
    /// `users.id`.
    package let userID: String
    /// The name, control characters replaced (see `Printable.text`).
    package let name: String
    /// The current emergency contact address: masked unless the report shows full emails.
    package let contactEmail: String
}
