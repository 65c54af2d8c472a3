import Bounce
import Foundation
import Mail
import Rule
import Store
import Values

/// Mail to one contact through `MAIL_TRANSPORT` (SMTP, or the outbox): the composer's message
/// with the claim's `Message-ID`, sent from `MAIL_FROM` at `SMTP_RATE_LIMIT`'s pace, its answer
/// read as docs/delivery.md's classification table says (`SendOutcome.classify`, then `delivered`).
///
/// With `BOUNCE_ADDRESS` set, each message's envelope sender (`MAIL FROM`) is the signed tag of
/// its delivery row (`BounceTag`, docs/bounces.md), so that a relay's later report of a dead
/// mailbox names the row it is about; the `From:` header stays `FROM_EMAIL`.
package final class MailChannel: DeliveryChannel {
    package let channel = DeliveryJob.Channel.email
    package let words = ChannelWords(server: "the mail server (or outbox)", messageIDField: "smtp_message_id",
                                      replyField: "smtp_reply", bracketsIDs: true)
    private let composer: MailComposer
    private let transport: any MailTransport
    private let limiter: RateLimiter?
    private let runDate: CalendarDate
    /// The envelope senders of the rows (`BOUNCE_ADDRESS`); nil: every message from `FROM_EMAIL`.
    private let bounceTag: BounceTag?

    /// A channel sending over `transport` (one worker's), which hears `control`'s stop signal and
    /// feeds its watchdog while the server is slow; `limiter` is the run's, shared by its workers;
    /// `bounceTag` tags each message's envelope sender with its row.
    package init(composer: MailComposer, transport: any MailTransport, limiter: RateLimiter?, runDate: CalendarDate,
                 control: RunControl, bounceTag: BounceTag? = nil) {
        self.composer = composer
        self.transport = transport
        self.limiter = limiter
        self.runDate = runDate
        self.bounceTag = bounceTag
        transport.hear(control.stop, onWait: { control.alive() })
    }

    package func newMessageID(for job: DeliveryJob) -> String { composer.newMessageID(for: job, runDate: runDate) }

    /// The next `SMTP_RATE_LIMIT` slot (all of a run's connections together).
    package func awaitTurn(stop: StopSignal) -> Bool { limiter.map { $0.acquire(stop: stop) } ?? true }

    /// Renders the message once; each attempt hands the same bytes to the transport.
    package func attempt(_ job: DeliveryJob, claim: Claim) -> ChannelAttempt {
        let bytes = composer.message(for: job, runDate: runDate, messageID: claim.messageID).rendered()
        let sender = envelopeSender(row: claim.logID)
        let (transport, recipient) = (transport, job.email.address)
        return { () throws(ChannelFailure) in try Self.delivered(transport.send(from: sender, to: recipient, message: bytes)) }
    }

    /// The `MAIL FROM` of row `row`: its tagged bounce address, or `FROM_EMAIL` without one.
    package func envelopeSender(row: Int64) -> String {
        bounceTag?.envelopeSender(row: row) ?? composer.from.address
    }

    /// The relay that took the last mail (`SMTP_HOST`, or one of `SMTP_FALLBACK`'s).
    package var acceptedBy: String? { transport.relay }
    /// The relays the last mail passed over.
    package var passedOver: [String] { transport.passedOver }

    package func describe(_ job: DeliveryJob) -> String {
        job.kind == .alert ? "notification (\(job.missedDays) days missed)" : job.kind.rawValue
    }

    /// The server's reply to an accepted mail, or the failure an outcome means: a 4xx about this
    /// message or no usable server is transient (saying which), a 5xx permanent (undeliverable
    /// when it says the recipient does not exist, `SendOutcome.saysNoSuchUser`), no final reply
    /// after the whole message went out unknown.
    package static func delivered(_ outcome: SendOutcome) throws(ChannelFailure) -> String {
        switch outcome {
        case .accepted(let reply): return reply
        case .transient(let reason, let serverUnavailable):
            throw .transient(reason, serverUnavailable ? .serverUnusable : .thisMessage)
        case .permanent(let reply): throw .permanent(reply, undeliverable: outcome.saysNoSuchUser)
        case .unknown(let reason): throw .unknown(reason)
        }
    }
}
