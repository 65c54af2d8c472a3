/// A `notification_logs` row the `retry` command would re-attempt.
public struct RetryTarget: Sendable, Equatable {
    /// `users.id`.
    public let userID: String
    /// `failed`, `retry` or `sending` (a claim whose process died).
    public let status: String
    /// Attempts so far.
    public let attempts: Int
    /// The last failure, as recorded.
    public let lastError: String?
    /// The masked contact address.
    public var recipient: String?
    /// What the message is (`alert`, `all_clear`, `follow_up`, `introduction`, `reminder`).
    public var kind: String = "alert"
    /// How it travels (`email`, `webhook`).
    public var channel: String = "email"
    /// Whether its contact is still one the user has in force (an alert to an address the app
    /// corrected or removed since is not sent again).
    public var contactInForce = true
}
