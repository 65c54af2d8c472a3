import Config
import Foundation
import Rule
import Values

extension LifecycleStore {
    /// The kinds `dueStreakNotices` reads: what a streak's answers owe.
    package static let answerKinds: Set<DeliveryJob.Kind> = [.acknowledged, .escalation, .unheard, .outcomeOK, .outcomeUnreachable]

    /// What the answers to alerted streaks owe now, from one statement (docs/acknowledgement.md,
    /// docs/escalation.md), for the streaks whose alert is dated from `oldest` on. Each answer is a
    /// row of one list — a contact said "I'm on it" (`acknowledged`, naming the first who did),
    /// the streak escalated (`escalation`) or went unheard (`unheard`), a contact said how it
    /// ended (`outcome_ok`, `outcome_unreachable`) — and each owes the same two things:
    ///
    /// - a notice, threaded under the alert on the alert's channel, to every contact whose alert
    ///   of the streak was accepted on a contact's channel and to whom no message of the streak
    ///   bounced as a dead address — but those the answer leaves out: who acknowledged (for
    ///   `acknowledged`), who said how it ended (for the outcomes and, once said, the escalation),
    ///   and for `escalation` everyone not on the rule's list (`EscalationRule.Escalation.notices`,
    ///   kept with the move; a streak escalated before the lists were kept: the first wave, by the
    ///   tiers in SQL);
    /// - one event per streak on each app's channel that carries the kind (`unheard` has no notice).
    ///
    /// With `firstAlerts`, an escalated streak also owes its alert, dated as the streak's, to each
    /// second-tier contact on the rule's list (`firstAlerts`; before the lists: every second-tier
    /// contact in force not yet alerted) who is still a contact and not known to be undeliverable.
    /// Each message unless its row is sent, failed for good, in flight or waiting for its retry
    /// (a retry comes from here when its time comes). Only the kinds of `kinds` on the channels
    /// `messages` has on for them. Reads only.
    package func dueStreakNotices(_ db: PGConnection, oldest: CalendarDate, kinds: Set<DeliveryJob.Kind>, messages: MessageSettings,
                                  firstAlerts: Bool, onlyUsers: [String]? = nil) throws -> [Due] {
        // The (kind, channel) pairs on: a kind's notices and events go on the channels that carry it.
        let pairs = kinds.intersection(Self.answerKinds).sorted().flatMap { kind in messages.channels(for: kind).map { (kind, $0) } }
        guard !pairs.isEmpty else { return [] }
        return try owed(db, SQLStatement("""
            WITH p AS (SELECT * FROM unnest($pair_kinds::text[], $pair_channels::text[]) AS p(kind, channel)),
            e AS MATERIALIZED (
                SELECT e.user_id, e.alert_date, e.last_check_in_date, e.stage, e.outcome, e.outcome_contact, e.outcome_at,
                       e.notice_contacts, e.first_alert_contacts
                FROM sileme.escalations e
                WHERE (e.stage IN ('escalated', 'unheard') OR e.outcome IS NOT NULL) AND e.alert_date >= $oldest::date
                  AND ($user_ids::uuid[] IS NULL OR e.user_id = ANY($user_ids::uuid[]))
            ), s AS MATERIALIZED (
                -- Every answer of a streak, one row each: what it names, and whom it leaves out.
                SELECT * FROM (
                    SELECT DISTINCT ON (k.user_id, k.alert_date) k.user_id, k.alert_date, k.last_check_in_date,
                           'acknowledged' AS kind, k.contact AS said_contact, k.acknowledged_at AS said_at, NULL::text AS outcome,
                           NULL::text AS left_out, NULL::text[] AS listed, false AS by_tiers
                    FROM sileme.acknowledgements k
                    WHERE 'acknowledged' = ANY($pair_kinds::text[]) AND k.alert_date >= $oldest::date
                      AND ($user_ids::uuid[] IS NULL OR k.user_id = ANY($user_ids::uuid[]))
                    ORDER BY k.user_id, k.alert_date, k.acknowledged_at, k.contact
                ) k
                UNION ALL
                SELECT e.user_id, e.alert_date, e.last_check_in_date, 'escalation', NULL, NULL, NULL, e.outcome_contact,
                       e.notice_contacts, e.notice_contacts IS NULL
                FROM e WHERE e.stage IN ('escalated', 'unheard')
                UNION ALL
                SELECT e.user_id, e.alert_date, e.last_check_in_date, 'unheard', NULL, NULL, NULL, NULL, '{}', false
                FROM e WHERE e.stage = 'unheard'
                UNION ALL
                SELECT e.user_id, e.alert_date, e.last_check_in_date, 'outcome_' || e.outcome::text, e.outcome_contact, e.outcome_at,
                       e.outcome::text, e.outcome_contact, NULL, false
                FROM e WHERE e.outcome IS NOT NULL
            )
            -- The notices: to each contact alerted on the streak, on the alert's channel.
            SELECT a.user_id::text AS user_id, u.name, a.contact, 1 AS position, a.notification_date, a.message_id AS in_reply_to,
                   a.consecutive_miss_days AS miss, a.last_check_in_date AS last, a.channel, s.kind,
                   s.said_contact, extract(epoch FROM s.said_at) AS said_epoch, s.outcome
            FROM s
            JOIN p ON p.kind = s.kind
            JOIN notification_logs a ON a.user_id = s.user_id AND a.notification_date = s.alert_date AND a.kind = 'alert'
                                    AND a.channel = p.channel AND a.channel = ANY($contact_channels::text[])
                                    AND a.email_sent AND a.contact <> ''
            JOIN users u ON u.id = a.user_id
            WHERE NOT \(Self.bounced(user: "a.user_id", date: "a.notification_date", contact: "a.contact", channel: "a.channel"))
              AND a.contact IS DISTINCT FROM s.left_out
              AND (s.kind <> 'acknowledged'
                   OR NOT EXISTS (SELECT 1 FROM sileme.acknowledgements o
                                  WHERE o.user_id = s.user_id AND o.alert_date = s.alert_date AND o.contact = a.contact))
              AND (s.listed IS NULL OR a.contact = ANY(s.listed))
              -- A streak escalated before the lists were kept: the first wave, by the tiers — a
              -- second-tier contact only when no first-tier contact of the streak was alerted.
              AND (NOT s.by_tiers
                   OR NOT EXISTS (SELECT 1 FROM emergency_contacts c
                                  WHERE c.user_id = a.user_id AND lower(btrim(c.email)) = a.contact AND c.tier = 2)
                   OR NOT EXISTS (SELECT 1 FROM notification_logs f
                                  JOIN emergency_contacts c ON c.user_id = f.user_id AND lower(btrim(c.email)) = f.contact AND c.tier = 1
                                  WHERE f.user_id = s.user_id AND f.notification_date = s.alert_date AND f.kind = 'alert'
                                    AND f.channel = a.channel AND f.email_sent))
              AND \(noSettledRow(user: "a.user_id", date: "a.notification_date", kind: "s.kind", contact: "a.contact", channel: "a.channel"))
            UNION ALL
            -- The second tier's first alerts of an escalated streak.
            SELECT e.user_id::text, u.name, btrim(c.email), c.position, e.alert_date, NULL, \(Self.streakMiss("e")),
                   e.last_check_in_date, m.channel, 'alert', NULL, NULL, NULL
            FROM e
            JOIN users u ON u.id = e.user_id
            CROSS JOIN LATERAL (SELECT c.email, c.position, c.tier FROM emergency_contacts c
                                WHERE c.user_id = e.user_id ORDER BY c.position, c.id LIMIT 5) c
            CROSS JOIN unnest($contact_channels::text[]) AS m(channel)
            WHERE $first_alerts::bool AND e.stage IN ('escalated', 'unheard')
              AND (lower(btrim(c.email)) = ANY(e.first_alert_contacts) OR (e.first_alert_contacts IS NULL AND c.tier = 2))
              AND NOT EXISTS (SELECT 1 FROM contact_status s
                              WHERE s.user_id = e.user_id AND s.email = lower(btrim(c.email)) AND s.status = 'undeliverable')
              AND \(noSettledRow(user: "e.user_id", date: "e.alert_date", kind: "'alert'", contact: "lower(btrim(c.email))",
                                 channel: "m.channel"))
            UNION ALL
            -- The app's events: one per streak and answer.
            SELECT s.user_id::text, u.name, '', 1, s.alert_date, NULL, \(Self.streakMiss("s")), s.last_check_in_date, p.channel, s.kind,
                   s.said_contact, extract(epoch FROM s.said_at), s.outcome
            FROM s
            JOIN p ON p.kind = s.kind AND p.channel = ANY($app_channels::text[])
            JOIN users u ON u.id = s.user_id
            WHERE \(noSettledRow(user: "s.user_id", date: "s.alert_date", kind: "s.kind", contact: "''", channel: "p.channel"))
            ORDER BY 1, 5, 9, 10, 3
            """), [
            "oldest": oldest.description, "first_alerts": firstAlerts ? "true" : "false", "user_ids": onlyUsers.map { PGArray.literal($0) },
            "pair_kinds": PGArray.literal(pairs.map(\.0.rawValue)), "pair_channels": ChannelSQL.literal(pairs.map(\.1)),
        ]) { row in
            guard var due = Due(row) else { return nil }
            let said = row.string("said_contact").flatMap { contact in
                row.string("said_epoch").flatMap(Double.init).map { (contact, Date(timeIntervalSince1970: $0)) }
            }
            switch due.kind {
            case .acknowledged: due.acknowledgement = said
            case .outcomeOK, .outcomeUnreachable: due.outcome = said
            default: break
            }
            return due
        }
    }

    /// SQL: `m` of the streak `e` names (its alerts' largest), for an event about the streak.
    static func streakMiss(_ e: String) -> String {
        """
        coalesce((SELECT max(x.consecutive_miss_days) FROM notification_logs x
                  WHERE x.user_id = \(e).user_id AND x.notification_date = \(e).alert_date AND x.kind = 'alert'), 0)
        """
    }
}
