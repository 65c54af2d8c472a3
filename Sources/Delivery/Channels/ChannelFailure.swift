import Foundation
import Store

/// Why one attempt of a channel did not deliver, in the terms the dispatcher decides with:
/// whether to try again now, later or never, and whose fault it was — the server (unusable: says
/// nothing about the recipient, counts toward giving the channel up for the run) or this message.
/// Each channel classifies its own answers into it (`MailChannel.delivered`,
/// `WebhookChannel.delivered`); the dispatcher's retries, records and tally read only this.
package struct ChannelFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the failure allows.
    package enum Kind: Sendable, Equatable {
        /// Worth trying again: within the run after a backoff — or after `retryAfter`, the
        /// server's own wait, when that is short —, else at a later pass, not before `retryAfter`.
        case transient(Cause, retryAfter: TimeInterval?)
        /// The message may have arrived: all of it went out and no final answer came. Not tried
        /// again within the run (that could deliver it twice at once) but at a later pass, with
        /// the same id (at least once).
        case unknown
        /// Refused for good; `undeliverable` when the answer says the recipient does not exist
        /// (the contact is then marked so).
        case permanent(undeliverable: Bool)
    }

    /// Whose fault a transient failure was.
    package enum Cause: Sendable, Equatable {
        /// No usable server: refused, TLS, a timeout, a login refused, no answer at all, the
        /// channel switched off. Says nothing about the recipient.
        case serverUnusable
        /// The server answered, about this message.
        case thisMessage
    }

    /// What the failure allows.
    package let kind: Kind
    /// The server's answer or the reason, in words (recorded and logged, the address masked).
    package let reason: String

    /// Creates the failure.
    package init(_ kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// A transient failure.
    package static func transient(_ reason: String, _ cause: Cause, retryAfter: TimeInterval? = nil) -> ChannelFailure {
        ChannelFailure(.transient(cause, retryAfter: retryAfter), reason: reason)
    }

    /// A failure whose outcome is unknown.
    package static func unknown(_ reason: String) -> ChannelFailure { ChannelFailure(.unknown, reason: reason) }

    /// A permanent refusal.
    package static func permanent(_ reason: String, undeliverable: Bool = false) -> ChannelFailure {
        ChannelFailure(.permanent(undeliverable: undeliverable), reason: reason)
    }

    package var description: String { reason }

    /// Whether the run tries again now, after its backoff (only a transient failure: an unknown
    /// outcome waits for a later pass).
    package var retriesInRun: Bool {
        if case .transient = kind { true } else { false }
    }

    /// The server's own wait before the next attempt (`Retry-After`), when it gave one.
    package var retryAfter: TimeInterval? {
        if case .transient(_, let retryAfter) = kind { retryAfter } else { nil }
    }

    /// Whether the server was unusable (counts toward the channel's give-up limit for the run).
    package var serverUnusable: Bool {
        if case .transient(.serverUnusable, _) = kind { true } else { false }
    }

    /// Whether it was refused for good.
    package var isPermanent: Bool {
        if case .permanent = kind { true } else { false }
    }

    /// Whether the recipient does not exist.
    package var undeliverable: Bool { kind == .permanent(undeliverable: true) }

    /// The row's status: `failed` for good, else `retry` at a later pass.
    package var status: RecordedOutcome.Status { isPermanent ? .failed : .retry }

    /// What the run's tally counts: failed for good, the server unusable (for mail, what sets the
    /// run's exit status; `RunTally` counts any failed webhook event as one), or failed for now.
    package var outcome: RunTally.Outcome {
        isPermanent ? .failedPermanently : serverUnusable ? .serverUnavailable : .failedTransiently
    }
}
