/// What the rule decides for one user whose streak of missed days reached the threshold.
///
/// The raw values are the `decision` strings of the dry-run report (docs/interfaces.md).
public enum Decision: String, Sendable, CaseIterable, Codable {
    /// Due, valid data, nothing sent in this streak: mail the emergency contact.
    case send
    /// A mail was already accepted by the mail server during this streak.
    case alreadyNotified = "already_notified"
    /// Missed more than threshold + catch-up days: reported, never mailed.
    case stale
    /// The emergency email is not a usable address.
    case invalidEmail = "invalid_email"
    /// The user's name is empty once cleaned.
    case invalidName = "invalid_name"
}
