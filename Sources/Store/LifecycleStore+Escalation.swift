import Foundation
import Rule
import Values

extension LifecycleStore {
    /// The messages escalated streaks owe now (docs/escalation.md), read from the streaks whose
    /// escalation was recorded (`EscalationStore.escalate`) and whose alert is dated from `oldest`
    /// on: one `escalation` notice to every contact of the first alert — the first tier's, or
    /// everyone alerted when no first-tier contact was (`EscalationRule.firstWave`) — to whom no
    /// mail of the streak bounced (`bounced`), threaded under that alert, but the contact who said
    /// they could not reach the user; with `firstAlerts`, the streak's `alert`, dated as the
    /// streak's, to every second-tier contact in force not yet alerted whose address is not known
    /// to be undeliverable; with `webhook`, one `checkin.escalated` event per streak; with
    /// `unheardWebhook`, one `notifier.unheard` event per streak declared unheard. Each unless its
    /// row is sent, failed for good, in flight or waiting for its retry (a retry comes from here
    /// when its time comes). A streak heard or closed since owes nothing more. Only those of
    /// `kinds`, when given. Reads only.
    package func dueEscalations(_ db: PGConnection, oldest: CalendarDate, webhook: Bool, unheardWebhook: Bool,
                               firstAlerts: Bool = true, onlyUsers: [String]? = nil,
                               only kinds: Set<DeliveryJob.Kind>? = nil) throws -> [Due] {
        try owed(db, SQLStatement("""
            WITH e AS MATERIALIZED (
                SELECT e.user_id, e.alert_date, e.last_check_in_date, e.stage, e.outcome_contact
                FROM sileme.escalations e
                WHERE e.stage IN ('escalated', 'unheard') AND e.alert_date >= $oldest::date
                  AND ($user_ids::uuid[] IS NULL OR e.user_id = ANY($user_ids::uuid[]))
            )
            SELECT a.user_id::text AS user_id, u.name, a.contact, 1 AS position, a.notification_date, a.message_id AS in_reply_to,
                   a.consecutive_miss_days AS miss, a.last_check_in_date AS last, 'email' AS channel, 'escalation' AS kind
            FROM e
            JOIN notification_logs a ON a.user_id = e.user_id AND a.notification_date = e.alert_date AND a.kind = 'alert'
                                    AND a.channel = 'email' AND a.email_sent AND a.contact <> ''
            JOIN users u ON u.id = a.user_id
            WHERE NOT \(Self.bounced(user: "a.user_id", date: "a.notification_date", contact: "a.contact", channel: "'email'"))
              -- The first alert's contacts only: a second-tier contact is one of them only when no
              -- first-tier contact of the streak was alerted (its own alert came with the escalation).
              AND (NOT EXISTS (SELECT 1 FROM emergency_contacts c
                               WHERE c.user_id = a.user_id AND lower(btrim(c.email)) = a.contact AND c.tier = 2)
                   OR NOT EXISTS (SELECT 1 FROM notification_logs f
                                  JOIN emergency_contacts c ON c.user_id = f.user_id AND lower(btrim(c.email)) = f.contact AND c.tier = 1
                                  WHERE f.user_id = e.user_id AND f.notification_date = e.alert_date AND f.kind = 'alert'
                                    AND f.channel = 'email' AND f.email_sent))
              AND a.contact IS DISTINCT FROM e.outcome_contact
              AND \(noSettledRow(user: "a.user_id", date: "a.notification_date", kind: "escalation", contact: "a.contact"))
            UNION ALL
            SELECT e.user_id::text, u.name, btrim(c.email), c.position, e.alert_date, NULL, \(Self.streakMiss("e")),
                   e.last_check_in_date, 'email', 'alert'
            FROM e
            JOIN users u ON u.id = e.user_id
            CROSS JOIN LATERAL (SELECT c.email, c.position, c.tier FROM emergency_contacts c
                                WHERE c.user_id = e.user_id ORDER BY c.position, c.id LIMIT 5) c
            WHERE $first_alerts::bool AND c.tier = 2
              AND NOT EXISTS (SELECT 1 FROM contact_status s
                              WHERE s.user_id = e.user_id AND s.email = lower(btrim(c.email)) AND s.status = 'undeliverable')
              AND \(noSettledRow(user: "e.user_id", date: "e.alert_date", kind: "alert", contact: "lower(btrim(c.email))"))
            UNION ALL
            SELECT e.user_id::text, u.name, '', 1, e.alert_date, NULL, \(Self.streakMiss("e")), e.last_check_in_date, 'webhook', 'escalation'
            FROM e
            JOIN users u ON u.id = e.user_id
            WHERE $webhook::bool
              AND \(noSettledRow(user: "e.user_id", date: "e.alert_date", kind: "escalation", contact: "''", channel: "'webhook'"))
            UNION ALL
            SELECT e.user_id::text, u.name, '', 1, e.alert_date, NULL, \(Self.streakMiss("e")), e.last_check_in_date, 'webhook', 'unheard'
            FROM e
            JOIN users u ON u.id = e.user_id
            WHERE $unheard_webhook::bool AND e.stage = 'unheard'
              AND \(noSettledRow(user: "e.user_id", date: "e.alert_date", kind: "unheard", contact: "''", channel: "'webhook'"))
            ORDER BY 1, 5, 9, 10, 3
            """), [
            "oldest": oldest.description, "webhook": webhook ? "true" : "false", "unheard_webhook": unheardWebhook ? "true" : "false",
            "first_alerts": firstAlerts ? "true" : "false", "user_ids": onlyUsers.map { PGArray.literal($0) },
        ]) { row in Due(row).flatMap { kinds?.contains($0.kind) == false ? nil : $0 } }
    }

    /// SQL: `m` of the streak `e` names (its alerts' largest), for an event about the streak.
    static func streakMiss(_ e: String) -> String {
        """
        coalesce((SELECT max(x.consecutive_miss_days) FROM notification_logs x
                  WHERE x.user_id = \(e).user_id AND x.notification_date = \(e).alert_date AND x.kind = 'alert'), 0)
        """
    }
}
