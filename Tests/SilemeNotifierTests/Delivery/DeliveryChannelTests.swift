import Foundation
import Testing
@testable import Delivery
import Mail
import Rule
import Store
import Values
import Webhook

/// Each channel's answers read as one typed failure (docs/delivery.md's classification table,
/// docs/webhooks.md's outcome table), and what the dispatcher decides from that failure alone.
@Suite("Delivery channels: answers and failures")
struct DeliveryChannelTests {
    typealias Hook = WebhookTransport.Outcome

    /// The reply of an accepted message, or the failure an answer means.
    static func mail(_ outcome: SendOutcome) -> Result<String, ChannelFailure> {
        Result { () throws(ChannelFailure) in try MailChannel.delivered(outcome) }
    }

    static func hook(_ outcome: Hook) -> Result<String, ChannelFailure> {
        Result { () throws(ChannelFailure) in try WebhookChannel.delivered(outcome) }
    }

    @Test("mail: accepted is the reply; a 4xx about this message and no usable server are transient, told apart")
    func mailTransient() {
        #expect(Self.mail(.accepted(reply: "250 2.0.0 Ok: queued")) == .success("250 2.0.0 Ok: queued"))
        #expect(Self.mail(SendOutcome.classify(curlCode: 55, responseCode: 451, reply: "451 4.3.0 try later", curlMessage: ""))
                == .failure(.transient("451 4.3.0 try later", .thisMessage)))
        for curl in [7, 28, 35, 60, 67] {
            let outcome = SendOutcome.classify(curlCode: curl, responseCode: curl == 67 ? 535 : 0, reply: nil, curlMessage: "no")
            guard case .failure(let failure) = Self.mail(outcome) else {
                Issue.record("curl \(curl) delivered")
                continue
            }
            #expect(failure.kind == .transient(.serverUnusable, retryAfter: nil), "curl \(curl)")
        }
    }

    @Test("mail: a 5xx is permanent, undeliverable only when it says there is no such user; no final reply is unknown")
    func mailPermanentAndUnknown() {
        #expect(Self.mail(.permanent(reply: "550 5.1.1 <a@b.c>: no such user")) == .failure(.permanent("550 5.1.1 <a@b.c>: no such user", undeliverable: true)))
        #expect(Self.mail(.permanent(reply: "554 5.7.1 rejected by policy")) == .failure(.permanent("554 5.7.1 rejected by policy")))
        #expect(Self.mail(.unknown(reason: "outcome unknown")) == .failure(.unknown("outcome unknown")))
    }

    @Test("webhook: 2xx is the status; an answered retry is about this message and keeps Retry-After; no answer is the endpoint unusable")
    func webhookTransient() {
        #expect(Self.hook(.delivered(status: 204)) == .success("HTTP 204"))
        #expect(Self.hook(.transient(reason: "HTTP 503: busy", retryAfter: 20)) == .failure(.transient("HTTP 503: busy", .thisMessage, retryAfter: 20)))
        #expect(Self.hook(.transient(reason: "unexpected HTTP 600", retryAfter: nil)) == .failure(.transient("unexpected HTTP 600", .thisMessage)))
        #expect(Self.hook(.transient(reason: "curl error 7: refused", retryAfter: nil)) == .failure(.transient("curl error 7: refused", .serverUnusable)))
    }

    @Test("webhook: a refusal is permanent, never undeliverable (an endpoint says nothing of a contact's address)")
    func webhookPermanent() {
        #expect(Self.hook(.permanent(status: 404, reason: "HTTP 404")) == .failure(.permanent("HTTP 404")))
        #expect(Self.hook(.permanent(status: 0, reason: "bad id")) == .failure(.permanent("bad id")))
    }

    @Test("what a failure means for the row, the tally and the run's retries")
    func decisions() {
        let unusable = ChannelFailure.transient("refused", .serverUnusable, retryAfter: 5)
        #expect(unusable.status == .retry && unusable.outcome == .serverUnavailable && unusable.retriesInRun)
        #expect(unusable.serverUnusable && unusable.retryAfter == 5 && !unusable.isPermanent && !unusable.undeliverable)
        let busy = ChannelFailure.transient("451", .thisMessage)
        #expect(busy.status == .retry && busy.outcome == .failedTransiently && busy.retriesInRun && !busy.serverUnusable)
        let unknown = ChannelFailure.unknown("no reply")
        #expect(unknown.status == .retry && unknown.outcome == .failedTransiently && !unknown.retriesInRun && unknown.retryAfter == nil)
        let gone = ChannelFailure.permanent("550 5.1.1", undeliverable: true)
        #expect(gone.status == .failed && gone.outcome == .failedPermanently && !gone.retriesInRun && gone.undeliverable)
        #expect(!ChannelFailure.permanent("554").undeliverable)
    }

    @Test("a webhook-id is msg_<date>_<kind>_<16 hex digits>, valid and new for each event")
    func webhookID() throws {
        let job = DeliveryJob(kind: .allClear, channel: .webhook, userID: "u1", name: try DisplayName(cleaning: "A"),
                              email: try EmailAddress(validating: "a@example.com"), missedDays: 3,
                              lastCheckIn: try #require(CalendarDate(parsing: "2026-01-10")))
        let runDate = try #require(CalendarDate(parsing: "2026-01-13"))
        let id = WebhookChannel.newID(for: job, runDate: runDate)
        #expect(id.hasPrefix("msg_20260113_all_clear_") && id.count == "msg_20260113_all_clear_".count + 16)
        #expect(WebhookEvent.isValidID(id) && id != WebhookChannel.newID(for: job, runDate: runDate))
    }

    @Test("the words of each channel's log lines are the journal's fields as before")
    func words() {
        let mail = ChannelWords(server: "the mail server (or outbox)", messageIDField: "smtp_message_id", replyField: "smtp_reply", bracketsIDs: true)
        #expect(mail.id("x@h") == "<x@h>")
        #expect(ChannelWords(server: "", messageIDField: "", replyField: "", bracketsIDs: false).id("msg_1") == "msg_1")
    }
}
