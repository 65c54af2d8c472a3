import Foundation
import Rule
import Store
import Values

/// One way a message reaches its recipient — a mail, a webhook event — as the dispatcher sees it:
/// the id a new row gets, the channel's turn to send, one repeatable attempt whose failure says
/// what it means (`ChannelFailure`), and the words its log lines use. Claim → send → record, the
/// retries within the run, the backoff and the give-up limit are the dispatcher's and the same for
/// every channel; what differs lives in the channel's own file (`MailChannel`, `WebhookChannel`),
/// so a new channel — or a new thing a channel must set on its messages — is one file, its
/// settings, and its line in `DeliveryChannels.standard`.
///
/// One per send worker, made on its thread: a channel owns its connection (a libcurl handle is
/// one thread's), and is used by that worker only.
package protocol DeliveryChannel: AnyObject {
    /// The jobs it sends (`DeliveryJob.channel`).
    var channel: DeliveryJob.Channel { get }

    /// How its log lines name its server, message ids and replies.
    var words: ChannelWords { get }

    /// A new id for `job`'s row, made before the claim: the claim keeps an existing row's id, so
    /// every attempt and every takeover sends the same one (the receiver de-duplicates by it).
    func newMessageID(for job: DeliveryJob) -> String

    /// Waits for the channel's turn to send (a rate limit); false when the run was stopped first.
    func awaitTurn(stop: StopSignal) -> Bool

    /// Prepares `job`, claimed as `claim`, and returns one attempt at it, which the dispatcher
    /// repeats with the same bytes: it returns the server's reply, or throws why not.
    func attempt(_ job: DeliveryJob, claim: Claim) -> ChannelAttempt

    /// `job` as log lines name it: "notification (3 days missed)", "webhook checkin.alert".
    func describe(_ job: DeliveryJob) -> String

    /// Who answered the last attempt, when the channel has a choice of servers (mail's relays,
    /// `SMTP_FALLBACK`): recorded with a sent row.
    var acceptedBy: String? { get }

    /// The servers the last attempt passed over, each unusable (counted per relay).
    var passedOver: [String] { get }
}

extension DeliveryChannel {
    /// No rate limit: the turn is now.
    package func awaitTurn(stop: StopSignal) -> Bool { true }

    /// One server: nothing to record.
    package var acceptedBy: String? { nil }
    package var passedOver: [String] { [] }
}

/// One attempt at a claimed message: the server's reply when it was delivered, else the typed
/// failure (`DeliveryChannel.attempt`).
package typealias ChannelAttempt = () throws(ChannelFailure) -> String

/// How a channel's log lines name its server, its message ids and its replies (the journal's
/// fields are the operators' interface: `smtp_message_id`, `webhook_reply`, …).
package struct ChannelWords: Sendable, Equatable {
    /// What was unusable when messages failed with `ChannelFailure.Cause.serverUnusable`.
    package let server: String
    /// The field of a message's id.
    package let messageIDField: String
    /// The field of the server's reply to a delivered message.
    package let replyField: String
    /// Whether ids are written in angle brackets, as mail headers write a `Message-ID`.
    package let bracketsIDs: Bool

    /// Creates the words.
    package init(server: String, messageIDField: String, replyField: String, bracketsIDs: Bool) {
        self.server = server
        self.messageIDField = messageIDField
        self.replyField = replyField
        self.bracketsIDs = bracketsIDs
    }

    /// `id` as the log lines write it.
    package func id(_ id: String) -> String { bracketsIDs ? "<\(id)>" : id }
}
