import Config
import Foundation
import Mail
import Rule
import Store
import Values
import Webhook

extension Dispatcher {
    /// A new `webhook-id` for `job`: `msg_<date>_<kind>_<16 hex digits>`, unique per event and
    /// kept by its row across retries (the receiver de-duplicates by it).
    static func newWebhookID(for job: DeliveryJob, runDate: CalendarDate) -> String {
        let random = String(UInt64.random(in: .min ... .max), radix: 16)
        let date = job.date(runDate: runDate).description.replacingOccurrences(of: "-", with: "")
        return "msg_\(date)_\(job.kind.rawValue)_" + String(repeating: "0", count: 16 - random.count) + random
    }

    /// The event a claimed webhook job sends. Built from the row's facts only — the claim's
    /// `webhook-id`, the event's time (`event_at`, kept across takeovers) and the day it falls on
    /// in `NOTIFY_TIME_ZONE` as `run_date` — so that every attempt sends the same body (unless
    /// the user's contacts changed in between).
    func webhookEvent(for job: DeliveryJob, claim: Claim) throws(WebhookEvent.InvalidID) -> WebhookEvent {
        let at = claim.eventAt ?? Date()
        var payload = WebhookEvent.Payload(
            userID: job.userID, userName: job.name.value, runDate: CalendarDate(at, in: configuration.timeZone),
            lastCheckInDate: job.lastCheckIn, missDays: job.missedDays,
            contacts: job.contacts.map { WebhookEvent.Contact(email: $0.address.address, position: $0.position) })
        if job.kind == .alert || job.kind == .followUp, let links = composer.ackLinks {
            // Each contact's own link, for a gateway that texts the alert (docs/acknowledgement.md).
            payload.contacts = job.contacts.map { contact in
                WebhookEvent.Contact(email: contact.address.address, position: contact.position,
                                     ackURL: links.link(userID: job.userID, alertDate: job.date(runDate: runDate),
                                                        contact: contact.address.address, runDate: runDate, missedDays: job.missedDays))
            }
        }
        switch job.kind {
        case .alert:
            payload.pausedUntil = job.pausedUntil
        case .allClear:
            payload.alertMessageID = job.inReplyTo
            payload.checkedInAt = job.checkedIn?.at
        case .followUp:
            payload.alertMessageID = job.inReplyTo
        case .reminder:
            payload.pausedUntil = job.pausedUntil
            payload.alertDate = job.date(runDate: runDate).adding(days: configuration.rule.thresholdDays - 1)
        case .introduction:
            payload.contact = WebhookEvent.Contact(email: job.email.address, position: job.position)
        case .acknowledged:
            payload.alertMessageID = job.inReplyTo
            if let acknowledgement = job.acknowledgement {
                let position = job.contacts.first { $0.address.address.lowercased() == acknowledgement.contact }?.position ?? 0
                payload.contact = WebhookEvent.Contact(email: acknowledgement.contact, position: position)
                payload.acknowledgedAt = acknowledgement.at
            }
        }
        return try WebhookEvent(type: job.kind.webhookEventType, id: claim.messageID, timestamp: at, payload: payload)
    }

    /// One POST of `body` as the event `id`, as a mail-like outcome: delivered is accepted; a
    /// transient answer says whether the endpoint answered at all (no answer counts toward giving
    /// the channel up for the run) and carries its `Retry-After`.
    static func post(_ transport: WebhookTransport, id: String, body: String) -> (SendOutcome, retryAfter: TimeInterval?) {
        switch transport.send(id: id, body: body) {
        case .delivered(let status):
            return (.accepted(reply: "HTTP \(status)"), nil)
        case .transient(let reason, let retryAfter):
            return (.transient(reason: reason, serverUnavailable: !WebhookTransport.Outcome.answered(reason)), retryAfter)
        case .permanent(_, let reason):
            return (.permanent(reply: reason), nil)
        }
    }

    /// The longest wait between two attempts within a run (`Retry-After` asking for more moves the
    /// next attempt to a later pass, at that time).
    static let longestWaitInRun: TimeInterval = 30
}

/// One send worker's transports: the mail transport, made when the worker starts, and the
/// webhook's, made at its first webhook event (a run with none opens no HTTP connection).
final class WorkerTransports {
    /// SMTP or the outbox.
    let mail: any MailTransport
    private let settings: WebhookSettings?
    private let control: RunControl
    private var madeWebhook: WebhookTransport?

    init(mail: any MailTransport, webhook settings: WebhookSettings?, control: RunControl) {
        self.mail = mail
        self.settings = settings
        self.control = control
    }

    /// The webhook transport (made on first use, hearing the run's stop signal and feeding its
    /// watchdog); nil when the channel is off.
    func webhook() throws -> WebhookTransport? {
        if let madeWebhook { return madeWebhook }
        guard let settings else { return nil }
        let transport = try WebhookTransport(settings: settings)
        transport.hear(control.stop, onWait: { [control] in control.alive() })
        madeWebhook = transport
        return transport
    }
}
