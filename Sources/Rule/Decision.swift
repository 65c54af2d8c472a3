/// What the rule decides for one user whose streak of missed days reached the threshold.
///
/// The raw values are the `decision` strings of the dry-run report (docs/interfaces.md).
package enum Decision: String, Sendable, CaseIterable, Codable {
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
    /// Another account with the same contact address and cleaned name checked in after this
    /// user's `L'`: the same person's newer account (a reinstall of the anonymous app). No mail.
    case superseded
    /// The user is away (`users.paused_until ≥ D`). No mail.
    case paused
    /// Due, but the missed days include an intake gap (the app could not record check-ins): the
    /// alert is held until the hold ends or `release` (docs/intake-hold.md), never dropped.
    case held

    /// The decisions every report's summary names even when none was taken (the first five); the
    /// others are named when at least one user has them.
    package var alwaysSummarised: Bool {
        switch self {
        case .send, .alreadyNotified, .stale, .invalidEmail, .invalidName: true
        case .superseded, .paused, .held: false
        }
    }

    /// Whether a real run records a `skipped` row (with the reason) for the user.
    package var recordsSkip: Bool {
        switch self {
        case .invalidEmail, .invalidName, .superseded: true
        case .send, .alreadyNotified, .stale, .paused, .held: false
        }
    }
}
