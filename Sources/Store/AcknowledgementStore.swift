import Foundation
import Values

/// The SQL of the acknowledgement page (docs/acknowledgement.md): what the page shows
/// about a streak, and the one write its button makes. Stateless; `streak` only reads.
package struct AcknowledgementStore: Sendable {
    /// One contact the streak's alert reached.
    package struct Recipient: Sendable, Equatable {
        /// The address as the delivery key holds it (trimmed, lower-cased): never shown.
        package var contact: String
        /// The masked address the row recorded (`recipient_masked`): what the page shows.
        package var masked: String
        /// When this contact acknowledged, if they did.
        package var acknowledgedAt: Date?
        /// `emergency_contacts.language` of this contact, as the app stored it: the page is
        /// written in it first.
        package var language: String?

        /// Creates the value.
        package init(contact: String, masked: String, acknowledgedAt: Date?, language: String? = nil) {
            self.contact = contact
            self.masked = masked
            self.acknowledgedAt = acknowledgedAt
            self.language = language
        }
    }

    /// What the page shows about a streak, as stored.
    package struct Streak: Sendable, Equatable {
        /// `users.name` as stored.
        package var rawName: String?
        /// `users.language` as stored: the page's language when neither the contact's nor the
        /// browser's is one it is written in.
        package var userLanguage: String?
        /// `L` of the alert.
        package var lastCheckIn: CalendarDate
        /// `m` on the alert's day.
        package var missedDaysAtAlert: Int
        /// The latest check-in after `L`, if the user has checked in since (the streak is over).
        package var checkedInSince: CalendarDate?
        /// The contacts whose alert was accepted, in the order their alerts were claimed.
        package var recipients: [Recipient]
        /// Whether the streak has its escalation record (`sileme.escalations`, every streak alerted
        /// since migration 024): where an outcome is kept, so only then can one be said.
        package var recordsOutcome: Bool
        /// How it ended, as a contact who went said on the page (once per streak).
        package var outcome: OutcomeStore.Recorded?

        /// Creates the value.
        package init(rawName: String?, lastCheckIn: CalendarDate, missedDaysAtAlert: Int, checkedInSince: CalendarDate?,
                    recipients: [Recipient], recordsOutcome: Bool = false, outcome: OutcomeStore.Recorded? = nil,
                    userLanguage: String? = nil) {
            self.rawName = rawName
            self.userLanguage = userLanguage
            self.lastCheckIn = lastCheckIn
            self.missedDaysAtAlert = missedDaysAtAlert
            self.checkedInSince = checkedInSince
            self.recipients = recipients
            self.recordsOutcome = recordsOutcome
            self.outcome = outcome
        }
    }

    /// Creates the store.
    package init() {}

    /// The streak of `userID` whose alert is dated `alertDate`: nil when no alert of it was
    /// accepted (an unknown user or date: the page is the neutral one). Reads only.
    package func streak(_ db: PGConnection, userID: String, alertDate: CalendarDate) throws -> Streak? {
        let rows = try db.execute(SQLStatement("""
            SELECT u.name, u.language AS user_language, a.contact, coalesce(a.recipient_masked, '') AS masked,
                   a.last_check_in_date AS last,
                   \(GuardSQL.contactLanguage(user: "a.user_id", contact: "a.contact")) AS contact_language,
                   a.consecutive_miss_days AS miss, extract(epoch FROM k.acknowledged_at) AS ack_epoch,
                   (SELECT max(c.check_in_date) FROM check_ins c
                    WHERE c.user_id = a.user_id AND c.check_in_date > a.last_check_in_date) AS since,
                   e.user_id IS NOT NULL AS records_outcome, e.outcome, e.outcome_contact,
                   extract(epoch FROM e.outcome_at) AS outcome_epoch
            FROM notification_logs a
            JOIN users u ON u.id = a.user_id
            LEFT JOIN sileme.escalations e ON e.user_id = a.user_id AND e.alert_date = a.notification_date
            LEFT JOIN sileme.acknowledgements k ON k.user_id = a.user_id AND k.alert_date = a.notification_date
                                               AND k.contact = a.contact
            WHERE a.user_id = $user_id::uuid AND a.notification_date = $alert_date::date AND a.kind = 'alert'
              AND a.channel = ANY($contact_channels::text[]) AND a.email_sent AND a.contact <> ''
            ORDER BY a.id
            """), ["user_id": userID, "alert_date": alertDate.description]).rows
        guard let first = rows.first, let last = first.date("last") else { return nil }
        return Streak(rawName: first.string("name"), lastCheckIn: last, missedDaysAtAlert: first.int("miss") ?? 0,
                      checkedInSince: first.date("since"),
                      recipients: rows.compactMap { row in
                          row.string("contact").map {
                              Recipient(contact: $0, masked: row.string("masked") ?? "",
                                        acknowledgedAt: row.string("ack_epoch").flatMap(Double.init).map(Date.init(timeIntervalSince1970:)),
                                        language: row.string("contact_language"))
                          }
                      },
                      recordsOutcome: first.bool("records_outcome"), outcome: OutcomeStore.Recorded(first),
                      userLanguage: first.string("user_language"))
    }

    /// Records that `contact` acknowledged the streak (once: a second press finds the row and
    /// changes nothing) and, when it was new, wakes the daemons that listen for check-ins
    /// (`NOTIFY sileme_check_in` with the user id): their pass sends the `acknowledged` notices
    /// at once; the periodic sweep finds it otherwise. Only for a contact whose alert of the
    /// streak was accepted. Returns whether this call recorded it.
    @discardableResult
    package func record(_ db: PGConnection, userID: String, alertDate: CalendarDate, contact: String) throws -> Bool {
        try db.execute(SQLStatement("""
            WITH a AS (
                SELECT a.user_id, a.notification_date, a.contact, a.last_check_in_date FROM notification_logs a
                WHERE a.user_id = $user_id::uuid AND a.notification_date = $alert_date::date AND a.kind = 'alert'
                  AND a.channel = ANY($contact_channels::text[]) AND a.email_sent AND a.contact = $contact
                LIMIT 1
            ), added AS (
                INSERT INTO sileme.acknowledgements (user_id, alert_date, contact, last_check_in_date)
                SELECT user_id, notification_date, contact, last_check_in_date FROM a
                ON CONFLICT DO NOTHING
                RETURNING user_id
            )
            SELECT pg_notify('sileme_check_in', user_id::text) FROM added
            """), ["user_id": userID, "alert_date": alertDate.description, "contact": contact]).rows.count == 1
    }

    /// How many acknowledgements were recorded from `since` on (the metrics file, `check`).
    package func count(_ db: PGConnection, since: Date) throws -> Int {
        try db.execute(SQLStatement("SELECT count(*) AS acknowledgements FROM sileme.acknowledgements WHERE acknowledged_at >= to_timestamp($since)"),
                       ["since": String(since.timeIntervalSince1970)])[0].int("acknowledgements") ?? 0
    }
}
