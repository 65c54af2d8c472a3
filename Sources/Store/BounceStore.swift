import Foundation
import Values

/// The SQL of the bounces (docs/bounces.md, migrations 022 and 032): the delivery row a report
/// names, and what a report changes — the row `bounced` for a permanent failure, and its contact
/// `undeliverable` only for a dead address (`BounceClass.noSuchAddress`); an event for every report
/// acted on or kept aside (`sileme.bounce_events`).
///
/// Every write is one statement keyed by the report (`Event.report`, the SHA-256 of the message),
/// so applying the same report again — read a second time after a crash between the commit and
/// its removal from the mailbox — finds its event and changes nothing.
package enum BounceStore {
    /// A delivery row as a report's effect needs it.
    package struct Delivery: Sendable, Equatable {
        /// `notification_logs.id`.
        package var id: Int64
        /// The user the row is about.
        package var userID: String
        /// The contact's address as the delivery key keeps it (trimmed, lower-cased; '' for none).
        package var contact: String
        /// `email` or `webhook`.
        package var channel: String
        /// `alert`, `all_clear`, …
        package var kind: String
        /// `sent`, `bounced`, `failed`, … (nil for a row from before migration 002).
        package var status: String?

        /// Creates the value.
        package init(id: Int64, userID: String, contact: String, channel: String = "email", kind: String = "alert",
                     status: String? = "sent") {
            self.id = id
            self.userID = userID
            self.contact = contact
            self.channel = channel
            self.kind = kind
            self.status = status
        }
    }

    /// What a report was, as `bounce_events.kind` says it.
    package enum Kind: String, Sendable, CaseIterable {
        /// A permanent failure (`Action: failed`, `5.x.x`), of the event's `bounceClass`.
        case permanent
        /// A delay, or a failure the sender's MTA gave up on with `4.x.x`.
        case transient
        /// An RFC 5965 complaint.
        case complaint
        /// A report that names no delivery row of ours (a forged or unknown tag, another system's mail).
        case unmatched
    }

    /// One report's event.
    package struct Event: Sendable, Equatable {
        /// The SHA-256 of the message, hex: the report's identity.
        package var report: String
        package var kind: Kind
        /// The recipient's domain, lower-cased ('' when unknown).
        package var domain: String
        /// The delivery row it is about (nil for `unmatched`).
        package var logID: Int64?
        /// The report's status code (`5.1.1`).
        package var status: String?
        /// The report's diagnostic, as the reader kept it.
        package var diagnostic: String?
        /// What a permanent failure says about the address (nil for the other kinds).
        package var bounceClass: BounceClass?

        /// Creates the value; a permanent event's class is its status's and diagnostic's
        /// (`BounceClass.of`) unless given.
        package init(report: String, kind: Kind, domain: String, logID: Int64? = nil, status: String? = nil, diagnostic: String? = nil,
                     bounceClass: BounceClass? = nil) {
            self.report = report
            self.kind = kind
            self.domain = domain
            self.logID = logID
            self.status = status
            self.diagnostic = diagnostic
            self.bounceClass = bounceClass ?? (kind == .permanent ? .of(status: status, text: diagnostic) : nil)
        }
    }

    /// The columns of a delivery row read by both lookups.
    private static let deliveryColumns = """
        n.id::text AS id, n.user_id::text AS user_id, n.contact, n.channel, n.kind, n.status
        """

    /// The delivery row `id` (the row a verified tag names); nil when there is none (retention
    /// deleted it, or it never was).
    package static func delivery(_ db: PGConnection, id: Int64) throws -> Delivery? {
        try db.executePrepared(SQLStatement("SELECT \(deliveryColumns) FROM notification_logs n WHERE n.id = $id::bigint"),
                       ["id": String(id)]).rows.first.flatMap(delivery)
    }

    /// The delivery row whose `Message-ID` is `messageID` — the second key, for a report whose tag
    /// was lost (a relay that rewrote the envelope sender). Only an id of the notifier's own form
    /// (`MessageKey`) is looked up, by the user and date it names: one probe of the delivery key's
    /// index, with no index on `message_id` to keep up on every insert; another system's id is no
    /// row without asking.
    package static func delivery(_ db: PGConnection, messageID: String) throws -> Delivery? {
        guard let key = MessageKey(messageID) else { return nil }
        return try db.execute(SQLStatement("""
            SELECT \(deliveryColumns) FROM notification_logs n
            WHERE n.user_id = $user_id::uuid AND n.notification_date = $day::date AND n.message_id = $message_id
            """), ["user_id": key.userID, "day": key.date.description, "message_id": messageID]).rows.first.flatMap(delivery)
    }

    /// The user and date a `Message-ID` of the notifier's form names:
    /// `sileme.<YYYYMMDD>.<user id>.<16 hex>@<domain>` (`MailMessage.makeMessageID`).
    package struct MessageKey: Sendable, Equatable {
        package var userID: String
        package var date: CalendarDate

        /// Nil for any other form (the user id left out, not a UUID, not a date).
        package init?(_ messageID: String) {
            guard let at = messageID.lastIndex(of: "@") else { return nil }
            let parts = messageID[..<at].split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts[0] == "sileme", parts[1].count == 8, parts[1].allSatisfy(\.isASCII),
                  let user = UUID(uuidString: String(parts[2])), parts[3].count == 16 else { return nil }
            let digits = parts[1]
            let text = "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.suffix(2))"
            guard let date = CalendarDate(parsing: text) else { return nil }
            userID = user.uuidString.lowercased()
            self.date = date
        }
    }

    private static func delivery(_ row: PGRow) -> Delivery? {
        guard let id = row.string("id").flatMap({ Int64($0) }), let user = row.string("user_id") else { return nil }
        return Delivery(id: id, userID: user, contact: row.string("contact") ?? "", channel: row.string("channel") ?? "email",
                        kind: row.string("kind") ?? "alert", status: row.string("status"))
    }

    /// What applying a permanent bounce changed.
    package struct Applied: Sendable, Equatable {
        /// The event is new (false: this report was applied before, and nothing changed now).
        package var recorded: Bool
        /// The row went from `sent` to `bounced` now (false: it was bounced already, or never sent).
        package var bounced: Bool
        /// The contact was marked `undeliverable` now: the row bounced now, as a dead address.
        package var undeliverable = false
        /// The streak's notices to the contact that were waiting for a retry, now skipped
        /// (`contact_bounced`).
        package var noticesSkipped = 0
    }

    /// A permanent bounce of `event.logID`, in one statement (prepared once per session: a full
    /// mailbox runs it thousands of times): the event
    /// recorded; the row `bounced` with the report's status, diagnostic, class and time — only a
    /// sent mail, and only once. Then, only when the class says the address is dead
    /// (`BounceClass.addressIsDead`): its contact `undeliverable` in `contact_status`, as a send
    /// refused with "no such user" marks it (`NotificationStore.contactStatusUpsert`), the streak's
    /// notices waiting for a retry skipped, and the listening daemons woken for the user. The
    /// bounced row of a dead address is what owes the `contact.undeliverable` event
    /// (`LifecycleStore.dueUndeliverable`), so the event is committed with the bounce. A bounce of
    /// any other class (a full mailbox, a spam block) leaves the contact in use: the row says the
    /// mail did not arrive (escalation counts it, docs/escalation.md), and nothing else changes. A
    /// report applied before changes nothing: its event exists, so nothing after it runs.
    package static func applyPermanent(_ db: PGConnection, _ event: Event) throws -> Applied {
        precondition(event.kind == .permanent && event.logID != nil, "BounceStore.applyPermanent: a permanent event of a row")
        let row = try db.executePrepared(SQLStatement("""
            WITH event AS (
                \(insertEvent)
                RETURNING log_id
            ), bounced AS (
                UPDATE notification_logs n SET status = 'bounced', bounced_at = now(), bounce_status = $status,
                       bounce_diagnostic = $diagnostic, bounce_class = $bounce_class, updated_at = now()
                FROM event WHERE n.id = event.log_id AND n.email_sent AND n.status = 'sent'
                  AND n.channel = ANY($bounce_channels::text[])
                RETURNING n.user_id, n.notification_date, n.contact, n.channel, coalesce($diagnostic, $status) AS reply
            ), dead AS (
                -- Only a dead address changes more than its row (docs/bounces.md).
                SELECT * FROM bounced WHERE $bounce_class = '\(BounceClass.noSuchAddress.rawValue)'
            ), settled AS (
                -- The streak's notices to this contact waiting for a retry are no longer owed
                -- (docs/bounces.md): no run would send them, and as `retry` they would count in
                -- the backlog until they aged out. Skipped, with the reason, like a notice the
                -- claim cancels.
                UPDATE notification_logs r SET status = 'skipped', last_error = 'contact_bounced', updated_at = now()
                FROM dead b
                WHERE r.user_id = b.user_id AND r.notification_date = b.notification_date AND r.channel = b.channel
                  AND r.contact = b.contact AND r.kind IN \(LifecycleStore.noticeKinds) AND r.status = 'retry' AND NOT r.email_sent
                RETURNING 1
            ), marked AS (
                \(NotificationStore.contactStatusUpsert(from: "dead", status: "'undeliverable'"))
                RETURNING 1
            ), woken AS (
                -- The daemons that listen for check-ins run a pass for the user at the commit: it
                -- sends the `contact.undeliverable` event the bounced row now makes due.
                SELECT pg_notify('sileme_check_in', user_id::text) FROM dead
            )
            SELECT (SELECT count(*) FROM event)::int AS recorded, (SELECT count(*) FROM bounced)::int AS bounced,
                   (SELECT count(*) FROM marked)::int AS marked, (SELECT count(*) FROM woken)::int AS woken,
                   (SELECT count(*) FROM settled)::int AS settled
            """), binds(event))[0]
        let bounced = (row.int("bounced") ?? 0) > 0
        return Applied(recorded: (row.int("recorded") ?? 0) > 0, bounced: bounced,
                       undeliverable: bounced && event.bounceClass?.addressIsDead == true, noticesSkipped: row.int("settled") ?? 0)
    }

    /// Records a transient bounce, a complaint or an unmatched report; nothing else changes.
    /// Returns false when this report was recorded before.
    @discardableResult
    package static func record(_ db: PGConnection, _ event: Event) throws -> Bool {
        precondition(event.kind != .permanent, "BounceStore.record: a permanent bounce is applied, not only recorded")
        return try db.executePrepared(SQLStatement("""
            WITH event AS (
                \(insertEvent)
                RETURNING 1
            )
            SELECT count(*)::int AS recorded FROM event
            """), binds(event))[0].int("recorded") == 1
    }

    /// SQL: inserts the event, unless its report has one.
    private static let insertEvent = """
        INSERT INTO sileme.bounce_events (report, kind, domain, log_id, status_code, diagnostic, bounce_class)
        VALUES ($report, $kind, $domain, $log_id::bigint, $status, $diagnostic, $bounce_class)
        ON CONFLICT (report) DO NOTHING
        """

    private static func binds(_ event: Event) -> [String: String?] {
        ["report": event.report, "kind": event.kind.rawValue, "domain": event.domain, "log_id": event.logID.map(String.init),
         "status": event.status, "diagnostic": event.diagnostic, "bounce_class": event.bounceClass?.rawValue]
    }

    /// What the reader says of itself (`sileme.bounce_mailbox`): when it last listed the mailbox,
    /// when a poll last failed, and its counts so far. Nil values: never.
    package struct MailboxRecord: Sendable, Equatable {
        package var readAt: Date?
        package var failedAt: Date?
        /// Reports read (messages listed and read, or found too large).
        package var reports = 0
        /// Rows made `bounced`.
        package var bounced = 0
        /// Messages kept aside for a person.
        package var keptAside = 0
        /// Polls that could not use the mailbox or the database.
        package var failures = 0

        /// Creates the value.
        package init(readAt: Date? = nil, failedAt: Date? = nil, reports: Int = 0, bounced: Int = 0, keptAside: Int = 0, failures: Int = 0) {
            self.readAt = readAt
            self.failedAt = failedAt
            self.reports = reports
            self.bounced = bounced
            self.keptAside = keptAside
            self.failures = failures
        }
    }

    /// Adds a poll to the reader's record: read now with these counts, or (`failed`) a failed poll.
    package static func recordPoll(_ db: PGConnection, reports: Int, bounced: Int, keptAside: Int, failed: Bool) throws {
        try db.execute(SQLStatement("""
            INSERT INTO sileme.bounce_mailbox AS m (read_at, failed_at, reports, bounced, kept_aside, failures)
            VALUES (CASE WHEN $failed::bool THEN NULL ELSE now() END, CASE WHEN $failed::bool THEN now() END,
                    $reports::bigint, $bounced::bigint, $kept_aside::bigint, CASE WHEN $failed::bool THEN 1 ELSE 0 END)
            ON CONFLICT (id) DO UPDATE SET
                read_at = coalesce(excluded.read_at, m.read_at), failed_at = coalesce(excluded.failed_at, m.failed_at),
                reports = m.reports + excluded.reports, bounced = m.bounced + excluded.bounced,
                kept_aside = m.kept_aside + excluded.kept_aside, failures = m.failures + excluded.failures, updated_at = now()
            """), ["failed": failed ? "true" : "false", "reports": String(reports), "bounced": String(bounced),
                   "kept_aside": String(keptAside)])
    }

    /// The reader's record; nil before its first poll was recorded. Reads only.
    package static func mailboxRecord(_ db: PGConnection) throws -> MailboxRecord? {
        guard let row = try db.execute("""
            SELECT extract(epoch FROM read_at) AS read_epoch, extract(epoch FROM failed_at) AS failed_epoch,
                   reports, bounced, kept_aside, failures
            FROM sileme.bounce_mailbox
            """).rows.first else { return nil }
        func time(_ name: String) -> Date? { row.string(name).flatMap(Double.init).map(Date.init(timeIntervalSince1970:)) }
        return MailboxRecord(readAt: time("read_epoch"), failedAt: time("failed_epoch"), reports: row.int("reports") ?? 0,
                             bounced: row.int("bounced") ?? 0, keptAside: row.int("kept_aside") ?? 0, failures: row.int("failures") ?? 0)
    }
}
