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
    public let recipient: String?
}
