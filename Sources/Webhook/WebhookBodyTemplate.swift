import Config
import Foundation
import Output
import Values

/// `WEBHOOK_BODY_TEMPLATE`: a Mustache template whose rendering replaces the event's JSON body, so
/// that the notifier can call a gateway in the gateway's own format (an SMS provider's HTTP API, a
/// chat group bot).
///
/// Every text value is escaped for the inside of a JSON string before rendering (quotes,
/// backslashes, line breaks and other control characters, U+2028/2029), so `"{{user_name}}"` in
/// the template is a safe JSON string whatever the name holds; `{{{…}}}` is escaped as well.
/// Write text values inside quotes; numbers, booleans and the `*_json` values unquoted.
///
/// Variables (`variableNames`):
/// - `type`, `id`, `timestamp`, `app_name`: the event type, its `webhook-id`, when it happened
///   (RFC 3339 UTC), `APP_NAME`.
/// - `is_alert`, `is_all_clear`, `is_follow_up`, `is_reminder`, `is_introduction`, `is_acknowledged`,
///   `is_undeliverable`, `is_ping`, `is_alerts_held`, `is_escalated`, `is_outcome`, `is_unheard`, `is_canary_lost`:
///   true for the event's type, for sections: `{{#is_alert}}…{{/is_alert}}`.
/// - `user_id`, `user_name`, `run_date`, `last_check_in_date`, `miss_days` (a number),
///   `contacts` (a list of `email`, `position`, `language` and, with `ACK_BASE_URL`, `ack_url` on an alert
///   and a follow-up: `{{#contacts}}…{{/contacts}}`),
///   `contact_emails` (the addresses joined with ", "), `contact_count`.
/// - Present on some events only (use them as sections): `paused_until`, `alert_date`,
///   `alert_message_id`, `checked_in_at`, `contact` (`{{#contact}}{{email}}{{/contact}}`),
///   `acknowledged_at`, `bounce` (`{{#bounce}}{{status}} {{diagnostic}}{{/bounce}}`, also
///   `notification_kind`, `notification_date`, `message_id`, `bounced_at`), `outcome` (`ok` or
///   `unreachable`) with `outcome_by` (masked) and `outcome_at` (`checkin.outcome`).
/// - Already JSON, to write unquoted: `json` (the whole default body), `data_json` (its `data`
///   object), `contacts_json` (the contacts array).
///
/// - `notifier.alerts_held` (for the operator): `held` (a number), `gap_days` (the days joined
///   with ", "), `release_at`; `run_date` too.
/// - `notifier.canary_lost` (for the operator): `relay`, `canary_id`, `reason`, `sent_at`.
///
/// A `ping` (what `check` sends) and `notifier.alerts_held` have empty text for the user's facts,
/// `miss_days` and `contact_count` 0 and no contacts, so a template made for the other events
/// renders them as well; `is_ping` and `is_alerts_held` tell them apart.
package struct WebhookBodyTemplate: Sendable {
    private let template: WebhookSettings.BodyTemplate
    private let appName: String

    /// Every variable a template may use.
    package static let variableNames = [
        "type", "id", "timestamp", "app_name",
        "is_alert", "is_all_clear", "is_follow_up", "is_reminder", "is_introduction", "is_acknowledged", "is_undeliverable", "is_ping",
        "is_alerts_held", "is_escalated", "is_outcome", "is_unheard", "is_canary_lost",
        "user_id", "user_name", "run_date", "last_check_in_date", "miss_days", "contacts", "contact_emails", "contact_count",
        "paused_until", "alert_date", "alert_message_id", "checked_in_at", "contact", "acknowledged_at", "bounce",
        "outcome", "outcome_by", "outcome_at",
        "held", "gap_days", "release_at",
        "relay", "canary_id", "reason", "sent_at",
        "json", "data_json", "contacts_json",
    ]

    /// The template of `WEBHOOK_BODY_TEMPLATE`, with `APP_NAME` as `app_name`.
    ///
    /// Renders it once for each event type, with every optional fact present and with none, the
    /// text values full of characters that need escaping, and refuses it (naming
    /// `WEBHOOK_BODY_TEMPLATE`, exit 78) when any rendering is not JSON — a text variable
    /// written outside quotes, say — since the endpoint would then refuse every event.
    package init(_ template: WebhookSettings.BodyTemplate, appName: String) throws(ConfigurationError) {
        self.template = template
        self.appName = appName
        for sample in Self.samples {
            do {
                _ = try JSONSerialization.jsonObject(with: Data(render(sample).utf8), options: .fragmentsAllowed)
            } catch {
                // The parser's words (where it stopped), never the rendering: the template may hold
                // a gateway's API key.
                let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "not JSON"
                throw ConfigurationError(
                    setting: "WEBHOOK_BODY_TEMPLATE",
                    reason: "\(template.path) does not render JSON for a \(sample.type.rawValue) event "
                        + "(write text values inside quotes, numbers and *_json values without): \(detail.prefix(120)) (in the rendering)")
            }
        }
    }

    /// Checks the body template the webhook's settings name, if the channel is on and has one:
    /// what a program calls right after loading its configuration (the template was parsed there;
    /// this renders it), so that a template that cannot render JSON stops it with exit 78 too.
    package static func check(_ webhook: WebhookSettings?, appName: String) throws(ConfigurationError) {
        guard let template = webhook?.bodyTemplate else { return }
        _ = try WebhookBodyTemplate(template, appName: appName)
    }

    /// The body for `event`.
    package func render(_ event: WebhookEvent) -> String {
        template.template.render(Self.variables(event, appName: appName))
    }

    /// The rendering context of `event`: every text escaped for a JSON string, the `*_json`
    /// values as they are.
    static func variables(_ event: WebhookEvent, appName: String) -> [String: Any] {
        // The literal's quotes taken off by scalar: by Character, a value starting with a combining
        // mark or a joiner would lose it with the quote it clusters with.
        func text(_ value: String) -> String { String(String.UnicodeScalarView(Escaping.json(value).unicodeScalars.dropFirst().dropLast())) }
        var values: [String: Any] = [
            "type": text(event.type.rawValue), "id": text(event.id), "timestamp": text(CalendarDate.rfc3339(event.timestamp)),
            "app_name": text(appName), "json": event.jsonBody, "data_json": event.dataJSON,
        ]
        let flags: [(String, WebhookEventType)] = [
            ("is_alert", .alert), ("is_all_clear", .allClear), ("is_follow_up", .followUp), ("is_reminder", .reminder),
            ("is_introduction", .introduction), ("is_acknowledged", .acknowledged),
            ("is_undeliverable", .undeliverable), ("is_ping", .ping), ("is_alerts_held", .alertsHeld),
            ("is_escalated", .escalated), ("is_outcome", .outcome), ("is_unheard", .unheard), ("is_canary_lost", .canaryLost),
        ]
        for (name, type) in flags { values[name] = event.type == type }
        if let canary = event.canary {
            values["relay"] = text(canary.relay)
            values["canary_id"] = canary.canaryID
            values["reason"] = text(canary.reason)
            values["sent_at"] = CalendarDate.rfc3339(canary.sentAt)
        }
        if let held = event.held {
            values["held"] = held.count
            values["gap_days"] = held.gapDays.map(\.description).joined(separator: ", ")
            values["release_at"] = CalendarDate.rfc3339(held.releaseAt)
            values["run_date"] = held.runDate.description
        }
        guard let payload = event.payload else {
            // A ping or an operator's event: the user's facts empty, so that a template made for
            // the other events renders it too.
            values.merge(["user_id": "", "user_name": "", "run_date": "", "miss_days": 0, "contacts": [Any](), "contact_emails": "",
                          "contact_count": 0, "contacts_json": "[]"]) { old, _ in old }
            return values
        }
        func contact(_ contact: WebhookEvent.Contact) -> [String: Any] {
            var values: [String: Any] = ["email": text(contact.email), "position": contact.position]
            if let link = contact.ackURL { values["ack_url"] = text(link) }
            if let language = contact.language { values["language"] = text(language) }
            if let streak = contact.streak {
                values["tier"] = streak.tier
                values["alerted"] = streak.alerted
                values["bounced"] = streak.bounced
            }
            return values
        }
        values["user_id"] = text(payload.userID)
        values["user_name"] = text(payload.userName)
        values["run_date"] = payload.runDate.description
        values["last_check_in_date"] = payload.lastCheckInDate?.description
        values["miss_days"] = payload.missDays
        values["contacts"] = payload.contacts.map(contact)
        values["contact_emails"] = text(payload.contacts.map(\.email).joined(separator: ", "))
        values["contact_count"] = payload.contacts.count
        values["contacts_json"] = WebhookEvent.json(payload.contacts)
        values["paused_until"] = payload.pausedUntil?.description
        values["alert_date"] = payload.alertDate?.description
        values["alert_message_id"] = payload.alertMessageID.map(text)
        values["checked_in_at"] = payload.checkedInAt.map { CalendarDate.rfc3339($0) }
        values["contact"] = payload.contact.map(contact)
        values["acknowledged_at"] = payload.acknowledgedAt.map { CalendarDate.rfc3339($0) }
        values["outcome"] = payload.outcome.map { text($0.kind) }
        values["outcome_by"] = payload.outcome.map { text($0.by) }
        values["outcome_at"] = payload.outcome.map { CalendarDate.rfc3339($0.at) }
        values["bounce"] = payload.bounce.map { bounce -> [String: Any] in
            var values: [String: Any] = [
                "notification_kind": text(bounce.notificationKind), "notification_date": bounce.notificationDate.description,
                "bounced_at": CalendarDate.rfc3339(bounce.bouncedAt),
            ]
            values["message_id"] = bounce.messageID.map(text)
            values["status"] = bounce.status.map(text)
            values["diagnostic"] = bounce.diagnostic.map(text)
            return values
        }
        return values
    }

    /// An event of each type with every optional fact and one with none, their text full of what
    /// JSON must escape: what a template is tried with before it is accepted.
    static let samples: [WebhookEvent] = {
        let hostile = "\"Q\" \\ </x> \n\r\t\u{0}\u{1F}\u{7F}\u{2028}\u{2029} 张三 👩‍👩‍👧 e\u{301}"
        let contacts = [WebhookEvent.Contact(email: "first\"@example.com", position: 1, ackURL: "https://x.example/a\"\\\u{2028}"),
                        WebhookEvent.Contact(email: "second@example.com", position: 2,
                                             streak: WebhookEvent.StreakState(tier: 2, alerted: false, bounced: true))]
        let day = CalendarDate(year: 2026, month: 1, day: 13)!
        let time = Date(timeIntervalSince1970: 1_768_266_000)
        var full = WebhookEvent.Payload(userID: "00000000-0000-4000-8000-000000000000", userName: hostile, runDate: day,
                                        lastCheckInDate: day.adding(days: -3), missDays: 3, contacts: contacts)
        full.pausedUntil = day.adding(days: -1)
        full.alertDate = day.adding(days: 1)
        full.alertMessageID = "sileme.20260113.\(hostile)@sileme.app"
        full.checkedInAt = time
        full.contact = contacts[0]
        full.acknowledgedAt = time
        full.outcome = WebhookEvent.Outcome(kind: "ok", by: hostile, at: time)
        full.bounce = WebhookEvent.Bounce(notificationKind: "alert", notificationDate: day, messageID: hostile, status: "5.1.1",
                                          diagnostic: hostile, bouncedAt: time)
        let bare = WebhookEvent.Payload(userID: hostile, userName: "", runDate: day, lastCheckInDate: nil, missDays: 0, contacts: [])
        var events: [WebhookEvent] = []
        for type in WebhookEventType.selectable where type != .alertsHeld && type != .canaryLost {
            for payload in [full, bare] { events.append(try! WebhookEvent(type: type, id: "msg_sample", timestamp: time, payload: payload)) }
        }
        events.append(try! .alertsHeld(id: "msg_sample", timestamp: time,
                                       held: .init(runDate: day, count: 200, gapDays: [day.adding(days: -2), day.adding(days: -1)], releaseAt: time)))
        events.append(try! .canaryLost(id: "msg_sample", timestamp: time,
                                       canary: .init(relay: hostile, canaryID: 42, reason: "not_back", sentAt: time)))
        events.append(try! .ping(id: "msg_sample", timestamp: time))
        return events
    }()
}
