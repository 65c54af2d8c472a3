import Foundation

/// What to write to one claimed `notification_logs` row after its send attempts.
package struct RecordedOutcome: Sendable {
    /// The row's new status.
    package enum Status: String, Sendable {
        /// Accepted by the mail server.
        case sent
        /// Transient failure: due again at `nextAttempt`.
        case retry
        /// Permanent failure (5xx).
        case failed
    }

    /// `notification_logs.id`.
    package let logID: Int64
    /// The new status.
    package let status: Status
    /// Attempts made in this run.
    package let attempts: Int
    /// The server's reply or the failure, contact address masked.
    package let text: String
    /// When a `retry` is due again.
    package let nextAttempt: Date?
    /// When it happened (`sent_at` for accepted mails).
    package let at: Date
    /// The server refused the recipient as unknown ("no such user"): the contact is marked
    /// `undeliverable` in `contact_status`.
    package let undeliverable: Bool
    /// The relay that accepted a sent mail (its URL; nil for a webhook event or the outbox):
    /// `notification_logs.relay`, what the history report and the metrics count per relay.
    package let relay: String?
    /// The relays its attempts passed over, each having failed as a relay (`SMTP_FALLBACK`),
    /// once per time: counted per relay (`sileme.relay_counts`).
    package let passedOver: [String]

    /// Creates the value.
    package init(logID: Int64, status: Status, attempts: Int, text: String, nextAttempt: Date? = nil, at: Date,
                 undeliverable: Bool = false, relay: String? = nil, passedOver: [String] = []) {
        self.undeliverable = undeliverable
        self.relay = relay
        self.passedOver = passedOver
        self.logID = logID
        self.status = status
        self.attempts = attempts
        self.text = text
        self.nextAttempt = nextAttempt
        self.at = at
    }
}
