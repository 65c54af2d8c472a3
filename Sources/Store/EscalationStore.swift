import Foundation
import Rule
import Values

/// The SQL of escalation (docs/escalation.md): the alerted streaks due a step, with the facts
/// `EscalationRule` decides on, and the moves of a streak's stage. Each move is made only from the
/// stage before it, so of two daemons only one makes it (and only that one queues its messages).
package enum EscalationStore {
    /// One streak due a step, with what is stored about it.
    package struct Streak: Sendable, Equatable {
        /// `users.id`.
        package var userID: String
        /// The streak's alert date (its name, as in the delivery rows).
        package var alertDate: CalendarDate
        /// `L` of the alert.
        package var lastCheckIn: CalendarDate
        /// `alerted` or `escalated`.
        package var stage: String
        /// The facts the rule decides on.
        package var facts: EscalationRule.Facts
    }

    /// The streaks still `alerted` or `escalated` whose clock started at or before `before` (now
    /// less `ESCALATE_AFTER`; a streak owed its step at once started at `-infinity`), oldest first,
    /// at most `limit`: one probe of `escalations_due_idx`, which finds nothing when nothing is
    /// due. Each comes with the rule's facts, read for it alone: its contacts in force (at most 5,
    /// in serving order, or `users.emergency_email`) with their tier, whether their alert of the
    /// streak was accepted and whether it bounced (for one not alerted: whether the address is
    /// marked undeliverable); an acknowledgement; a check-in after `L`; the steps and the outcome
    /// recorded. Reads only.
    package static func due(_ db: PGConnection, before: Date, limit: Int) throws -> [Streak] {
        try db.execute(SQLStatement("""
            SELECT e.user_id::text AS user_id, e.alert_date, e.last_check_in_date AS last, e.stage,
                   extract(epoch FROM e.first_sent_at)::text AS first_sent, extract(epoch FROM e.escalated_at)::text AS escalated,
                   extract(epoch FROM e.unheard_at)::text AS unheard, e.outcome, e.outcome_contact,
                   extract(epoch FROM e.outcome_at)::text AS outcome_at,
                   EXISTS (SELECT 1 FROM sileme.acknowledgements k WHERE k.user_id = e.user_id AND k.alert_date = e.alert_date) AS acknowledged,
                   EXISTS (SELECT 1 FROM check_ins c WHERE c.user_id = e.user_id AND c.check_in_date > e.last_check_in_date) AS checked_in,
                   \(Self.contactsSQL("e")) AS contacts
            FROM sileme.escalations e
            WHERE e.stage IN ('alerted', 'escalated') AND e.clock_at <= to_timestamp($before)
            ORDER BY e.clock_at, e.user_id, e.alert_date
            LIMIT $limit
            """), ["before": String(before.timeIntervalSince1970), "limit": String(limit)]).rows.compactMap { row in
            func instant(_ name: String) -> Date? { row.string(name).flatMap(Double.init).map(Date.init(timeIntervalSince1970:)) }
            guard let user = row.string("user_id"), let date = row.date("alert_date"), let last = row.date("last"),
                  let stage = row.string("stage"), let first = instant("first_sent") else { return nil }
            let outcome = row.string("outcome").flatMap(EscalationRule.Outcome.init(rawValue:)).flatMap { kind in
                instant("outcome_at").map { (kind: kind, contact: row.string("outcome_contact") ?? "", at: $0) }
            }
            let facts = EscalationRule.Facts(firstSentAt: first, checkedIn: row.bool("checked_in"), acknowledged: row.bool("acknowledged"),
                                             contacts: contacts(row.string("contacts")), escalatedAt: instant("escalated"),
                                             unheardAt: instant("unheard"), outcome: outcome)
            return Streak(userID: user, alertDate: date, lastCheckIn: last, stage: stage, facts: facts)
        }
    }

    /// SQL: the contacts of the streak row `e` (with `user_id`, `alert_date`) as JSON text,
    /// `[[contact, tier, alerted, bounced, still_in_use], …]`: the contacts in force (at most 5,
    /// in serving order, or `users.emergency_email`), whether their alert of the streak was
    /// accepted, whether it bounced, whatever the class (for one not alerted: whether the address
    /// is marked undeliverable), and whether it bounced as anything but a dead address
    /// (`LifecycleStore.deadAddress`).
    static func contactsSQL(_ e: String) -> String {
        """
        (SELECT json_agg(json_build_array(x.contact, x.tier, x.alerted, x.bounced, x.still_in_use) ORDER BY x.position, x.id)
                    FROM (SELECT x.contact, x.tier, x.position, x.id, a.id IS NOT NULL AS alerted,
                                 CASE WHEN a.id IS NOT NULL THEN a.status = 'bounced'
                                      ELSE EXISTS (SELECT 1 FROM contact_status s WHERE s.user_id = \(e).user_id AND s.email = x.contact
                                                                                  AND s.status = 'undeliverable') END AS bounced,
                                 coalesce(a.status = 'bounced' AND NOT (\(LifecycleStore.deadAddress("a"))), false) AS still_in_use
                          FROM (SELECT lower(btrim(c.email)) AS contact, c.tier, c.position, c.id
                                FROM emergency_contacts c WHERE c.user_id = \(e).user_id ORDER BY c.position, c.id LIMIT 5) x
                          LEFT JOIN notification_logs a ON a.user_id = \(e).user_id AND a.notification_date = \(e).alert_date
                                                       AND a.kind = 'alert' AND a.channel = ANY($contact_channels::text[]) AND a.contact = x.contact
                                                       AND a.email_sent
                          UNION ALL
                          SELECT lower(btrim(u.emergency_email)), 1, 1, 0, a.id IS NOT NULL, coalesce(a.status = 'bounced', false),
                                 coalesce(a.status = 'bounced' AND NOT (\(LifecycleStore.deadAddress("a"))), false)
                          FROM users u
                          LEFT JOIN notification_logs a ON a.user_id = u.id AND a.notification_date = \(e).alert_date AND a.kind = 'alert'
                                                       AND a.channel = ANY($contact_channels::text[]) AND a.contact = lower(btrim(u.emergency_email))
                                                       AND a.email_sent
                          WHERE u.id = \(e).user_id AND NOT EXISTS (SELECT 1 FROM emergency_contacts c WHERE c.user_id = \(e).user_id)) x
                   )::text
        """
    }

    /// Where each contact stands in each of `streaks` (user, alert date), as `due` reads it for
    /// the rule: what `checkin.escalated` and `notifier.unheard` list. One statement. Reads only.
    package static func contacts(_ db: PGConnection, of streaks: [(userID: String, alertDate: CalendarDate)]) throws
        -> [String: [EscalationRule.Contact]] {
        guard !streaks.isEmpty else { return [:] }
        var found: [String: [EscalationRule.Contact]] = [:]
        for row in try db.execute(SQLStatement("""
            SELECT e.user_id::text AS user_id, e.alert_date, \(contactsSQL("e")) AS contacts
            FROM unnest($user_ids::uuid[], $dates::date[]) AS e(user_id, alert_date)
            """), ["user_ids": PGArray.literal(streaks.map(\.userID)), "dates": PGArray.literal(streaks.map(\.alertDate.description))]).rows {
            guard let user = row.string("user_id"), let date = row.date("alert_date") else { continue }
            found[streakKey(userID: user, alertDate: date)] = contacts(row.string("contacts"))
        }
        return found
    }

    /// The key of `contacts(_:of:)`' answer.
    package static func streakKey(userID: String, alertDate: CalendarDate) -> String { "\(userID.lowercased()) \(alertDate)" }

    /// The contacts of the `contacts` column: `[[contact, tier, alerted, bounced, still_in_use], …]`.
    static func contacts(_ text: String?) -> [EscalationRule.Contact] {
        guard let data = text?.data(using: .utf8), let rows = try? JSONSerialization.jsonObject(with: data) as? [[Any]] else { return [] }
        return rows.compactMap { row in
            guard row.count == 5, let key = row[0] as? String, !key.isEmpty, let tier = (row[1] as? NSNumber)?.intValue,
                  let alerted = row[2] as? Bool, let bounced = row[3] as? Bool, let stillInUse = row[4] as? Bool else { return nil }
            return EscalationRule.Contact(key: key, tier: tier, alerted: alerted, bounced: bounced, stillInUse: stillInUse)
        }
    }

    /// Records that the streak escalated at `at` (its clock restarts there), if it is still
    /// `alerted`, with the recipients the rule chose (`EscalationRule.Escalation`): the contacts
    /// told in the thread, and the second tier's alerted now — the list the messages are read from
    /// (`LifecycleStore.dueStreakNotices`); nil lists leave them to the tiers, as for a streak
    /// escalated before the lists were kept (migration 035). Returns whether this call made the move.
    @discardableResult
    package static func escalate(_ db: PGConnection, userID: String, alertDate: CalendarDate, at: Date,
                                 notices: [String]? = nil, firstAlerts: [String]? = nil) throws -> Bool {
        try move(db, userID: userID, alertDate: alertDate, from: ["alerted"], set: """
            stage = 'escalated', escalated_at = to_timestamp($at), clock_at = to_timestamp($at),
            notice_contacts = $notices::text[], first_alert_contacts = $first_alerts::text[]
            """, at: at, ["notices": notices.map { PGArray.literal($0) }, "first_alerts": firstAlerts.map { PGArray.literal($0) }])
    }

    /// Records that the streak is unheard, if it is still `escalated`. Returns whether this call made the move.
    @discardableResult
    package static func declareUnheard(_ db: PGConnection, userID: String, alertDate: CalendarDate, at: Date) throws -> Bool {
        try move(db, userID: userID, alertDate: alertDate, from: ["escalated"], set: "stage = 'unheard', unheard_at = to_timestamp($at)", at: at)
    }

    /// Records that the streak needs nothing more — heard (a check-in, an acknowledgement) or
    /// closed ("They're OK") — if it is still waiting for a step. Returns whether this call made the move.
    @discardableResult
    package static func settle(_ db: PGConnection, userID: String, alertDate: CalendarDate, closed: Bool, at: Date) throws -> Bool {
        try move(db, userID: userID, alertDate: alertDate, from: ["alerted", "escalated"],
                 set: "stage = '\(closed ? "closed" : "heard")', heard_at = to_timestamp($at)", at: at)
    }

    /// One move of a streak's stage, made only from one of `from`.
    private static func move(_ db: PGConnection, userID: String, alertDate: CalendarDate, from: [String], set: String, at: Date,
                             _ more: [String: String?] = [:]) throws -> Bool {
        try db.execute(SQLStatement("""
            UPDATE sileme.escalations SET \(set)
            WHERE user_id = $user_id::uuid AND alert_date = $alert_date::date AND stage = ANY($from::text[])
            """), more.merging(["user_id": userID, "alert_date": alertDate.description, "from": PGArray.literal(from),
                                "at": String(at.timeIntervalSince1970)]) { $1 }).affectedRows == 1
    }
}
