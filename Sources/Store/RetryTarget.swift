import Rule

/// A `notification_logs` row the `retry` command would re-attempt.
package struct RetryTarget: Sendable, Equatable {
    /// `users.id`.
    package let userID: String
    /// `failed`, `retry` or `sending` (a claim whose process died).
    package let status: String
    /// Attempts so far.
    package let attempts: Int
    /// The last failure, as recorded.
    package let lastError: String?
    /// The masked contact address.
    package var recipient: String?
    /// What the message is (`alert`, `all_clear`, `follow_up`, `introduction`, `reminder`).
    package var kind: String = "alert"
    /// How it travels.
    package var channel: DeliveryJob.Channel = .primary
    /// Whether its contact is still one the user has in force (an alert to an address the app
    /// corrected or removed since is not sent again).
    package var contactInForce = true
    /// Whether a mail of this streak to its contact bounced (docs/bounces.md): the streak's
    /// notices no longer go to that contact, so this one is not sent again.
    package var contactBounced = false
    /// `emergency_contacts.language` of its contact, as the app stored it (nil: none, or no contact).
    package var contactLanguage: String?
    /// `users.language`, as the app stored it.
    package var userLanguage: String?
}
