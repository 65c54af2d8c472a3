import Foundation

/// A `notification_logs` row this session owns and may send for.
public struct Claim: Sendable, Equatable {
    /// `notification_logs.id`.
    public let logID: Int64
    /// The `Message-ID` to send with (kept across a takeover, so a resend can be deduplicated).
    public let messageID: String
    /// Attempts recorded before this claim.
    public let previousAttempts: Int
    /// True when the row existed (a retry, or a crashed run's claim) rather than being inserted now.
    public let tookOver: Bool
    /// `event_at`: when the event happened — the check-in of an all-clear, else the row's first
    /// claim — kept across takeovers (a webhook event's `timestamp`, the same on every attempt).
    public var eventAt: Date?
}
