import Foundation

/// A `notification_logs` row this session owns and may send for.
package struct Claim: Sendable, Equatable {
    /// `notification_logs.id`.
    package let logID: Int64
    /// The `Message-ID` to send with (kept across a takeover, so a resend can be deduplicated).
    package let messageID: String
    /// Attempts recorded before this claim.
    package let previousAttempts: Int
    /// True when the row existed (a retry, or a crashed run's claim) rather than being inserted now.
    package let tookOver: Bool
    /// `event_at`: when the event happened — the check-in of an all-clear, else the row's first
    /// claim — kept across takeovers (a webhook event's `timestamp`, the same on every attempt).
    package var eventAt: Date?
}
