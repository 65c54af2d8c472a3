import Foundation
import Output
import Values

/// One event of the webhook channel: what happened (`type`), its `webhook-id`, when it happened,
/// and the facts about the user it concerns.
///
/// Its JSON body (`jsonBody`) is the same bytes every time it is built from the same values, so a
/// retry sends what the first attempt sent; only the `webhook-timestamp` header and so the
/// signature change between attempts.
package struct WebhookEvent: Sendable, Equatable {
    /// What happened.
    package let type: WebhookEventType
    /// The `webhook-id`: chosen by the caller, the same on every attempt of this event (the
    /// receiver de-duplicates by it). Letters, digits and `. _ : -`, at most `maximumIDLength`.
    package let id: String
    /// When the event happened (the body's `timestamp`; not the time of an attempt).
    package let timestamp: Date
    /// The facts about the user; nil for a `ping` and an operator's event.
    package let payload: Payload?
    /// The facts of `notifier.alerts_held` (for the operator, about no one user).
    package let held: Held?
    /// The facts of `notifier.canary_lost` (for the operator, about no one user).
    package let canary: LostCanary?

    /// The longest `id` accepted.
    package static let maximumIDLength = 128

    /// An event of `type` about `payload`. Throws when `id` is not a valid `webhook-id`.
    package init(type: WebhookEventType, id: String, timestamp: Date, payload: Payload) throws(InvalidID) {
        try self.init(type: type, id: id, timestamp: timestamp, payload: Optional(payload))
    }

    /// The signed test event `check` sends: `type` `ping`, `data` holding the notifier's version.
    package static func ping(id: String, timestamp: Date) throws(InvalidID) -> WebhookEvent {
        try WebhookEvent(type: .ping, id: id, timestamp: timestamp, payload: nil)
    }

    /// `notifier.alerts_held`: a run held alerts over an intake gap.
    package static func alertsHeld(id: String, timestamp: Date, held: Held) throws(InvalidID) -> WebhookEvent {
        try WebhookEvent(type: .alertsHeld, id: id, timestamp: timestamp, payload: nil, held: held)
    }

    /// `notifier.canary_lost`: a canary through a relay did not come back (docs/operating.md).
    package static func canaryLost(id: String, timestamp: Date, canary: LostCanary) throws(InvalidID) -> WebhookEvent {
        try WebhookEvent(type: .canaryLost, id: id, timestamp: timestamp, payload: nil, canary: canary)
    }

    private init(type: WebhookEventType, id: String, timestamp: Date, payload: Payload?, held: Held? = nil,
                 canary: LostCanary? = nil) throws(InvalidID) {
        guard Self.isValidID(id) else { throw InvalidID(length: id.utf8.count) }
        self.type = type
        self.id = id
        self.timestamp = timestamp
        self.payload = payload
        self.held = held
        self.canary = canary
    }

    /// The body's `data` of `notifier.canary_lost`: `{"relay","canary_id","reason","sent_at"}`.
    package struct LostCanary: Sendable, Equatable {
        /// `relay`: the relay's URL (no user, no password).
        package var relay: String
        /// `canary_id`: the canary's id (`sileme.canaries`).
        package var canaryID: Int64
        /// `reason`: `not_back`, `bounced` or `not_sent`.
        package var reason: String
        /// `sent_at`: when it was sent.
        package var sentAt: Date

        /// Creates the value.
        package init(relay: String, canaryID: Int64, reason: String, sentAt: Date) {
            self.relay = relay
            self.canaryID = canaryID
            self.reason = reason
            self.sentAt = sentAt
        }
    }

    /// The body's `data` of `notifier.alerts_held`: `{"run_date","held","gap_days","release_at"}`.
    package struct Held: Sendable, Equatable {
        /// `run_date`: the run date of the run that held them.
        package var runDate: CalendarDate
        /// `held`: how many users' alerts it held.
        package var count: Int
        /// `gap_days`: the intake gaps among their missed days.
        package var gapDays: [CalendarDate]
        /// `release_at`: when they go out (unless a check-in ends the streak, or `release` sooner).
        package var releaseAt: Date

        /// Creates the value.
        package init(runDate: CalendarDate, count: Int, gapDays: [CalendarDate], releaseAt: Date) {
            self.runDate = runDate
            self.count = count
            self.gapDays = gapDays
            self.releaseAt = releaseAt
        }
    }

    /// Whether `id` can be a `webhook-id`: 1 to `maximumIDLength` of `A–Z a–z 0–9 . _ : -`
    /// (safe in a header, a log line and a file name).
    package static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maximumIDLength && id.utf8.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x3A || byte == 0x2D
        }
    }

    /// An id that is not a valid `webhook-id` (see `WebhookEvent.isValidID`).
    package struct InvalidID: Error, Sendable, CustomStringConvertible {
        /// The id's length in bytes.
        package let length: Int

        package var description: String {
            "invalid webhook-id (\(length) bytes): 1 to \(WebhookEvent.maximumIDLength) letters, digits, '.', '_', ':' or '-'"
        }
    }
}

extension WebhookEvent {
    /// The facts of an event about a user: the body's `data` object.
    package struct Payload: Sendable, Equatable {
        /// `user_id`: the user's id (a UUID as text).
        package var userID: String
        /// `user_name`: the user's name as the app holds it.
        package var userName: String
        /// `run_date`: the day of the run that sent the event, in the service zone.
        package var runDate: CalendarDate
        /// `last_check_in_date`: the user's last check-in day; `null` when there was none.
        package var lastCheckInDate: CalendarDate?
        /// `miss_days`: days missed since the last check-in as of `runDate`.
        package var missDays: Int
        /// `contacts`: the user's emergency contacts, by position.
        package var contacts: [Contact]
        /// `paused_until`: the day a pause the user had set ended (an alert after a pause).
        package var pausedUntil: CalendarDate?
        /// `alert_date`: the day the contacts are told if the user does not check in (a reminder).
        package var alertDate: CalendarDate?
        /// `alert_message_id`: the `Message-ID` of the alert mail this event follows (an all-clear
        /// or a follow-up).
        package var alertMessageID: String?
        /// `checked_in_at`: when the user checked in (an all-clear).
        package var checkedInAt: Date?
        /// `contact`: the contact the event is about (an introduction; who acknowledged, for
        /// `checkin.acknowledged`).
        package var contact: Contact?
        /// `acknowledged_at`: when the contact pressed "I'm on it" (`checkin.acknowledged`).
        package var acknowledgedAt: Date?
        /// `bounce`: the mail that bounced and what the report said (`contact.undeliverable`).
        package var bounce: Bounce?
        /// `outcome`, `outcome_by`, `outcome_at`: how a contact who went said it ended
        /// (`checkin.outcome`).
        package var outcome: Outcome?

        /// The facts every event about a user has; the optional ones start out absent.
        package init(userID: String, userName: String, runDate: CalendarDate, lastCheckInDate: CalendarDate?,
                    missDays: Int, contacts: [Contact]) {
            self.userID = userID
            self.userName = userName
            self.runDate = runDate
            self.lastCheckInDate = lastCheckInDate
            self.missDays = missDays
            self.contacts = contacts
        }
    }

    /// A mail's permanent bounce: `{"notification_kind", "notification_date", "message_id",
    /// "status", "diagnostic", "bounced_at"}` (`message_id`, `status`, `diagnostic` `null` when unknown).
    package struct Bounce: Sendable, Equatable {
        /// `notification_kind`: what the mail was (`alert`, `all_clear`, …).
        package var notificationKind: String
        /// `notification_date`: the mail's date (the alert's, for the messages of its streak).
        package var notificationDate: CalendarDate
        /// `message_id`: the mail's `Message-ID`.
        package var messageID: String?
        /// `status`: the report's status code (`5.1.1`).
        package var status: String?
        /// `diagnostic`: the receiving server's words, as the report gave them.
        package var diagnostic: String?
        /// `bounced_at`: when the notifier read the report.
        package var bouncedAt: Date

        /// Creates the value.
        package init(notificationKind: String, notificationDate: CalendarDate, messageID: String?, status: String?,
                     diagnostic: String?, bouncedAt: Date) {
            self.notificationKind = notificationKind
            self.notificationDate = notificationDate
            self.messageID = messageID
            self.status = status
            self.diagnostic = diagnostic
            self.bouncedAt = bouncedAt
        }
    }

    /// What a contact who went said on the acknowledgement page (`checkin.outcome`).
    package struct Outcome: Sendable, Equatable {
        /// `outcome`: `ok` ("They're OK") or `unreachable` ("I couldn't reach them").
        package var kind: String
        /// `outcome_by`: who said it, masked (`d***@example.com`).
        package var by: String
        /// `outcome_at`: when.
        package var at: Date

        /// Creates the value.
        package init(kind: String, by: String, at: Date) {
            self.kind = kind
            self.by = by
            self.at = at
        }
    }

    /// An emergency contact: `{"email", "position"}`, with `language`, `ack_url` and the streak's
    /// state where the event has them.
    package struct Contact: Sendable, Equatable {
        /// The contact's address.
        package var email: String
        /// Its place in the user's list, from 1.
        package var position: Int
        /// `ack_url`: the contact's acknowledgement link (an alert or a follow-up with
        /// `ACK_BASE_URL` set), for a gateway that texts it; absent otherwise.
        package var ackURL: String?
        /// `tier`, `alerted`, `bounced`: where the contact stands in the streak (`checkin.escalated`,
        /// `notifier.unheard`), for a gateway that calls or texts whom the mail did not reach.
        package var streak: StreakState?
        /// `language`: the language the contact's mails are written in (a BCP 47 tag with
        /// templates: the contact's, else the user's, else the default), for a gateway that
        /// texts or calls them in it; absent where not known.
        package var language: String?

        /// A contact at `position`.
        package init(email: String, position: Int, ackURL: String? = nil, streak: StreakState? = nil, language: String? = nil) {
            self.email = email
            self.position = position
            self.ackURL = ackURL
            self.streak = streak
            self.language = language
        }
    }

    /// Where a contact stands in an escalated streak.
    package struct StreakState: Sendable, Equatable {
        /// `tier`: 1, or 2 ("only if nobody answers": alerted by the escalation).
        package var tier: Int
        /// `alerted`: the streak's first alert was accepted for the contact (a second-tier contact
        /// gets its alert from the escalation itself, so it is `false` there).
        package var alerted: Bool
        /// `bounced`: a mail of the streak to the contact bounced, or (not alerted) the address is
        /// known to be undeliverable.
        package var bounced: Bool

        /// Creates the value.
        package init(tier: Int, alerted: Bool, bounced: Bool) {
            self.tier = tier
            self.alerted = alerted
            self.bounced = bounced
        }
    }
}

extension WebhookEvent {
    /// The request body: `{"type","timestamp","data"}` in that order, `data`'s keys in the order
    /// `Payload` lists them (absent optional facts left out, `last_check_in_date` `null` when
    /// there was none), strings escaped as `Escaping.json` does, no white space.
    package var jsonBody: String {
        "{\"type\":\(Escaping.json(type.rawValue)),\"timestamp\":\(Escaping.json(CalendarDate.rfc3339(timestamp))),\"data\":\(dataJSON)}"
    }

    /// The body's `data` object as JSON.
    package var dataJSON: String {
        if let canary {
            return "{\"relay\":\(Escaping.json(canary.relay)),\"canary_id\":\(canary.canaryID),\"reason\":\(Escaping.json(canary.reason)),"
                + "\"sent_at\":\(Escaping.json(CalendarDate.rfc3339(canary.sentAt)))}"
        }
        if let held {
            return "{\"run_date\":\(Escaping.json(held.runDate.description)),\"held\":\(held.count),"
                + "\"gap_days\":[\(held.gapDays.map { Escaping.json($0.description) }.joined(separator: ","))],"
                + "\"release_at\":\(Escaping.json(CalendarDate.rfc3339(held.releaseAt)))}"
        }
        guard let payload else { return "{\"notifier_version\":\(Escaping.json(NotifierVersion.current))}" }
        var fields = [
            ("user_id", Escaping.json(payload.userID)),
            ("user_name", Escaping.json(payload.userName)),
            ("run_date", Escaping.json(payload.runDate.description)),
            ("last_check_in_date", payload.lastCheckInDate.map { Escaping.json($0.description) } ?? "null"),
            ("miss_days", String(payload.missDays)),
            ("contacts", Self.json(payload.contacts)),
        ]
        if let date = payload.pausedUntil { fields.append(("paused_until", Escaping.json(date.description))) }
        if let date = payload.alertDate { fields.append(("alert_date", Escaping.json(date.description))) }
        if let id = payload.alertMessageID { fields.append(("alert_message_id", Escaping.json(id))) }
        if let time = payload.checkedInAt { fields.append(("checked_in_at", Escaping.json(CalendarDate.rfc3339(time)))) }
        if let contact = payload.contact { fields.append(("contact", Self.json(contact))) }
        if let time = payload.acknowledgedAt { fields.append(("acknowledged_at", Escaping.json(CalendarDate.rfc3339(time)))) }
        if let bounce = payload.bounce { fields.append(("bounce", Self.json(bounce))) }
        if let outcome = payload.outcome {
            fields += [("outcome", Escaping.json(outcome.kind)), ("outcome_by", Escaping.json(outcome.by)),
                       ("outcome_at", Escaping.json(CalendarDate.rfc3339(outcome.at)))]
        }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// `[{"email","position"},…]`.
    static func json(_ contacts: [Contact]) -> String { "[" + contacts.map(json).joined(separator: ",") + "]" }

    /// `{"notification_kind","notification_date","message_id","status","diagnostic","bounced_at"}`.
    static func json(_ bounce: Bounce) -> String {
        func text(_ value: String?) -> String { value.map(Escaping.json) ?? "null" }
        return "{\"notification_kind\":\(Escaping.json(bounce.notificationKind)),"
            + "\"notification_date\":\(Escaping.json(bounce.notificationDate.description)),"
            + "\"message_id\":\(text(bounce.messageID)),\"status\":\(text(bounce.status)),"
            + "\"diagnostic\":\(text(bounce.diagnostic)),\"bounced_at\":\(Escaping.json(CalendarDate.rfc3339(bounce.bouncedAt)))}"
    }

    /// `{"email","position"}`, then `language`, `ack_url` and `tier`, `alerted`, `bounced` where known.
    static func json(_ contact: Contact) -> String {
        "{\"email\":\(Escaping.json(contact.email)),\"position\":\(contact.position)"
            + (contact.language.map { ",\"language\":\(Escaping.json($0))" } ?? "")
            + (contact.ackURL.map { ",\"ack_url\":\(Escaping.json($0))" } ?? "")
            + (contact.streak.map { ",\"tier\":\($0.tier),\"alerted\":\($0.alerted),\"bounced\":\($0.bounced)" } ?? "") + "}"
    }
}
