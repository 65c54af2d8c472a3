import Config
import Foundation
import Mail
import Rule
import Store
import Values
import Webhook

/// Signed webhook events to `WEBHOOK_URL` (docs/webhooks.md): the event of a claimed job, built
/// from the row's facts, its body rendered once (`WEBHOOK_BODY_TEMPLATE`), POSTed by a transport
/// made at the first event (a run with none opens no HTTP connection), and the endpoint's answer
/// read as `delivered` says.
package final class WebhookChannel: DeliveryChannel {
    package let channel = DeliveryJob.Channel.webhook
    package let words = ChannelWords(server: "the webhook endpoint", messageIDField: "webhook_id",
                                      replyField: "webhook_reply", bracketsIDs: false)
    private let configuration: NotifierConfiguration
    private let template: WebhookBodyTemplate?
    private let composer: MailComposer
    private let runDate: CalendarDate
    private let control: RunControl
    private var made: WebhookTransport?

    /// A channel for one worker: `template` is the run's rendering of `WEBHOOK_BODY_TEMPLATE`,
    /// `composer` gives the acknowledgement page's links (the mail's own); the transport hears
    /// `control`.
    package init(configuration: NotifierConfiguration, template: WebhookBodyTemplate?, composer: MailComposer,
                 runDate: CalendarDate, control: RunControl) {
        self.configuration = configuration
        self.template = template
        self.composer = composer
        self.runDate = runDate
        self.control = control
    }

    /// A new `webhook-id`: `msg_<date>_<kind>_<16 hex digits>`, unique per event.
    package func newMessageID(for job: DeliveryJob) -> String { Self.newID(for: job, runDate: runDate) }

    /// The event and its body, made once; each attempt POSTs the same body, signed anew for its
    /// own timestamp. An event or transport that cannot be made fails every attempt transiently,
    /// the endpoint counted unusable, as does the channel switched off (`WEBHOOK_URL` unset).
    package func attempt(_ job: DeliveryJob, claim: Claim) -> ChannelAttempt {
        let event: WebhookEvent
        let transport: WebhookTransport
        do {
            event = try self.event(for: job, claim: claim)
            guard let made = try self.transport() else {
                return { () throws(ChannelFailure) in
                    throw .transient("the webhook channel is off (WEBHOOK_URL unset)", .serverUnusable)
                }
            }
            transport = made
        } catch {
            let failure = ChannelFailure.transient("webhook: \(error)", .serverUnusable)
            return { () throws(ChannelFailure) in throw failure }
        }
        let body = event.body(using: template)
        return { () throws(ChannelFailure) in try Self.delivered(transport.send(id: event.id, body: body)) }
    }

    package func describe(_ job: DeliveryJob) -> String { "webhook \(job.kind.webhookEventType.rawValue)" }

    /// The transport, made on first use; nil when the channel is off.
    private func transport() throws -> WebhookTransport? {
        if let made { return made }
        guard let settings = configuration.webhook else { return nil }
        let transport = try WebhookTransport(settings: settings)
        transport.hear(control.stop, onWait: { [control] in control.alive() })
        made = transport
        return transport
    }

    /// The endpoint's status for a delivered event, or the failure an outcome means: a transient
    /// answer says whether the endpoint answered at all (no answer counts toward giving the channel
    /// up for the run) and carries its `Retry-After`; a refusal is permanent.
    package static func delivered(_ outcome: WebhookTransport.Outcome) throws(ChannelFailure) -> String {
        switch outcome {
        case .delivered(let status): return "HTTP \(status)"
        case .transient(let reason, let retryAfter):
            throw .transient(reason, WebhookTransport.Outcome.answered(reason) ? .thisMessage : .serverUnusable,
                             retryAfter: retryAfter)
        case .permanent(_, let reason): throw .permanent(reason)
        }
    }

    /// A new `webhook-id` for `job`: `msg_<date>_<kind>_<16 hex digits>`, unique per event and
    /// kept by its row across retries (the receiver de-duplicates by it).
    package static func newID(for job: DeliveryJob, runDate: CalendarDate) -> String {
        let random = String(UInt64.random(in: .min ... .max), radix: 16)
        let date = job.date(runDate: runDate).description.replacingOccurrences(of: "-", with: "")
        return "msg_\(date)_\(job.kind.rawValue)_" + String(repeating: "0", count: 16 - random.count) + random
    }

    /// The user's contacts as an escalated streak's events list them: each with its tier, whether
    /// the streak's first alert was accepted for it (`EscalationRule.firstWave`: a second-tier
    /// contact alerted by the escalation itself is not) and whether mail to it bounced. A contact
    /// the streak's read does not know (added since) is listed with its tier, neither alerted nor
    /// bounced.
    package static func streakContacts(_ job: DeliveryJob) -> [WebhookEvent.Contact] {
        let first = Set(EscalationRule.firstWave(job.streakContacts).map(\.key))
        return job.contacts.map { contact in
            let key = contact.address.address.lowercased()
            let state = job.streakContacts.first { $0.key == key }
            return WebhookEvent.Contact(email: contact.address.address, position: contact.position,
                                        streak: WebhookEvent.StreakState(tier: state?.tier ?? contact.tier, alerted: first.contains(key),
                                                                         bounced: state?.bounced ?? false))
        }
    }

    /// The language `email`'s mails are written in (docs/languages.md): the contact's, as the
    /// job's contacts carry it, else the user's, else the default.
    func language(of email: String, in job: DeliveryJob) -> String {
        let stored = job.contacts.first { $0.address.address.lowercased() == email.lowercased() }?.language
        return composer.templates.choose(contact: stored, user: job.languages.user).tag.identifier
    }

    /// The event a claimed webhook job sends. Built from the row's facts only — the claim's
    /// `webhook-id`, the event's time (`event_at`, kept across takeovers) and the day it falls on
    /// in `NOTIFY_TIME_ZONE` as `run_date` — so that every attempt sends the same body (unless
    /// the user's contacts changed in between).
    func event(for job: DeliveryJob, claim: Claim) throws(WebhookEvent.InvalidID) -> WebhookEvent {
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
        case .escalation, .unheard:
            payload.alertMessageID = job.inReplyTo
            payload.contacts = Self.streakContacts(job)
        case .outcomeOK, .outcomeUnreachable:
            // The streak (its alert's date) and who said what, masked: the app learns how it
            // ended, not another contact's address.
            payload.alertDate = job.notificationDate
            if let outcome = job.outcome {
                payload.outcome = WebhookEvent.Outcome(kind: job.kind == .outcomeOK ? "ok" : "unreachable",
                                                       by: EmailMasking.mask(outcome.contact), at: outcome.at)
            }
        case .acknowledged:
            payload.alertMessageID = job.inReplyTo
            if let acknowledgement = job.acknowledgement {
                let position = job.contacts.first { $0.address.address.lowercased() == acknowledgement.contact }?.position ?? 0
                payload.contact = WebhookEvent.Contact(email: acknowledgement.contact, position: position)
                payload.acknowledgedAt = acknowledgement.at
            }
        case .undeliverable:
            // The contact the bounce is about, as the delivery key holds it, at its place in the list now.
            let address = job.email.address.lowercased()
            let position = job.contacts.first { $0.address.address.lowercased() == address }?.position ?? 0
            payload.contact = WebhookEvent.Contact(email: address, position: position)
            if let bounce = job.bounce {
                payload.bounce = WebhookEvent.Bounce(notificationKind: bounce.kind.rawValue, notificationDate: job.date(runDate: runDate),
                                                     messageID: bounce.messageID, status: bounce.status,
                                                     diagnostic: bounce.diagnostic, bouncedAt: bounce.at)
            }
        }
        // Each listed contact's language, whatever built the list.
        payload.contacts = payload.contacts.map { listed in
            var contact = listed
            contact.language = language(of: listed.email, in: job)
            return contact
        }
        return try WebhookEvent(type: job.kind.webhookEventType, id: claim.messageID, timestamp: at, payload: payload)
    }
}
