import Foundation
import Rule
import Values

extension LifecycleStore {
    /// The outcome notices due now (docs/escalation.md): for each streak whose alert is dated from
    /// `oldest` on and on which a contact said how it ended, one `outcome_ok` or
    /// `outcome_unreachable` notice to every other contact whose alert of the streak was accepted
    /// and to whom no mail of the streak bounced — threaded under that alert — and, with
    /// `webhook`, one `checkin.outcome` event per streak; each unless its row is sent, failed for
    /// good, in flight or waiting for its retry (a retry comes from here when its time comes).
    /// The partial index of the streaks with an outcome keeps this a small read. Only those of
    /// `kinds`, when given. Reads only.
    package func dueOutcomes(_ db: PGConnection, oldest: CalendarDate, webhook: Bool, onlyUsers: [String]? = nil,
                            only kinds: Set<DeliveryJob.Kind>? = nil) throws -> [Due] {
        // One branch per kind and channel: each is the notice's own delivery key.
        let branches = [EscalationRule.Outcome.ok, .unreachable].flatMap { outcome -> [String] in
            let kind = outcome == .ok ? DeliveryJob.Kind.outcomeOK.rawValue : DeliveryJob.Kind.outcomeUnreachable.rawValue
            return ["""
                SELECT a.user_id::text AS user_id, u.name, a.contact, a.notification_date, a.message_id AS in_reply_to,
                       a.consecutive_miss_days AS miss, a.last_check_in_date AS last, 'email' AS channel, '\(kind)' AS kind,
                       e.outcome::text AS outcome, e.outcome_contact, extract(epoch FROM e.outcome_at) AS outcome_epoch
                FROM e
                JOIN notification_logs a ON a.user_id = e.user_id AND a.notification_date = e.alert_date AND a.kind = 'alert'
                                        AND a.channel = 'email' AND a.email_sent AND a.contact <> ''
                JOIN users u ON u.id = a.user_id
                WHERE e.outcome = '\(outcome.rawValue)' AND a.contact <> e.outcome_contact
                  AND NOT \(Self.bounced(user: "a.user_id", date: "a.notification_date", contact: "a.contact", channel: "'email'"))
                  AND \(noSettledRow(user: "a.user_id", date: "a.notification_date", kind: kind, contact: "a.contact"))
                """, """
                SELECT e.user_id::text, u.name, '', e.alert_date, NULL, \(Self.streakMiss("e")), e.last_check_in_date,
                       'webhook', '\(kind)', e.outcome::text, e.outcome_contact, extract(epoch FROM e.outcome_at)
                FROM e
                JOIN users u ON u.id = e.user_id
                WHERE $webhook::bool AND e.outcome = '\(outcome.rawValue)'
                  AND \(noSettledRow(user: "e.user_id", date: "e.alert_date", kind: kind, contact: "''", channel: "'webhook'"))
                """]
        }
        return try owed(db, SQLStatement("""
            WITH e AS MATERIALIZED (
                SELECT e.user_id, e.alert_date, e.last_check_in_date, e.outcome, e.outcome_contact, e.outcome_at
                FROM sileme.escalations e
                WHERE e.outcome IS NOT NULL AND e.alert_date >= $oldest::date
                  AND ($user_ids::uuid[] IS NULL OR e.user_id = ANY($user_ids::uuid[]))
            )
            \(branches.joined(separator: "UNION ALL\n"))
            ORDER BY 1, 4, 8, 9, 3
            """), [
            "oldest": oldest.description, "webhook": webhook ? "true" : "false", "user_ids": onlyUsers.map { PGArray.literal($0) },
        ]) { row in
            var due = Due(row)
            if let said = OutcomeStore.Recorded(row) { due?.outcome = (said.contact, said.at) }
            return due.flatMap { kinds?.contains($0.kind) == false ? nil : $0 }
        }
    }
}
