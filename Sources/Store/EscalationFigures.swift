import Foundation
import Values

/// Where escalation stands, for operators (docs/escalation.md): the steps made so far (the metrics'
/// counters) and the escalated streaks still not heard now (their gauges, and `check`'s line).
package struct EscalationFigures: Sendable, Equatable {
    /// Escalations made, ever (`sileme.escalation_tally`: never goes down, not even when retention
    /// deletes old streaks).
    package var escalated = 0
    /// Streaks declared unheard, ever (likewise).
    package var declaredUnheard = 0
    /// Escalated streaks not heard yet, waiting for their unheard step.
    package var open = 0
    /// Streaks declared unheard and still not heard: nobody checked in, acknowledged or said
    /// "They're OK" since.
    package var unheard = 0
    /// The one of `unheard` declared first.
    package var oldestUnheard: Oldest?

    /// One unheard streak, by its name.
    package struct Oldest: Sendable, Equatable {
        /// `users.id`.
        package var userID: String
        /// The streak's alert date.
        package var alertDate: CalendarDate
        /// When it was declared unheard.
        package var since: Date

        /// Creates the value.
        package init(userID: String, alertDate: CalendarDate, since: Date) {
            self.userID = userID
            self.alertDate = alertDate
            self.since = since
        }
    }

    /// Nothing escalated.
    package init() {}

    /// Reads the figures. "Heard" as `EscalationRule` has it: a check-in after `L`, "They're OK",
    /// or an acknowledgement not taken back by "I couldn't reach them" — read for the escalated
    /// streaks alone (`escalations_escalated_idx`), which are few. Reads only.
    package static func read(_ db: PGConnection) throws -> EscalationFigures {
        let row = try db.execute(SQLStatement("""
            SELECT t.escalated, t.unheard AS declared, s.open, s.unheard, s.oldest_user, s.oldest_date,
                   extract(epoch FROM s.oldest_at)::text AS oldest_at
            FROM sileme.escalation_tally t
            CROSS JOIN (
                SELECT count(*) FILTER (WHERE e.stage = 'escalated') AS open, count(*) FILTER (WHERE e.stage = 'unheard') AS unheard,
                       (array_agg(e.user_id::text ORDER BY e.unheard_at, e.user_id) FILTER (WHERE e.stage = 'unheard'))[1] AS oldest_user,
                       (array_agg(e.alert_date::text ORDER BY e.unheard_at, e.user_id) FILTER (WHERE e.stage = 'unheard'))[1] AS oldest_date,
                       min(e.unheard_at) FILTER (WHERE e.stage = 'unheard') AS oldest_at
                FROM sileme.escalations e
                WHERE e.stage IN ('escalated', 'unheard')
                  AND NOT EXISTS (SELECT 1 FROM check_ins c WHERE c.user_id = e.user_id AND c.check_in_date > e.last_check_in_date)
                  AND e.outcome IS DISTINCT FROM 'ok'
                  AND (e.outcome = 'unreachable'
                       OR NOT EXISTS (SELECT 1 FROM sileme.acknowledgements k WHERE k.user_id = e.user_id AND k.alert_date = e.alert_date))
            ) s
            """))
        var figures = EscalationFigures()
        guard row.count == 1 else { return figures }
        figures.escalated = row[0].int("escalated") ?? 0
        figures.declaredUnheard = row[0].int("declared") ?? 0
        figures.open = row[0].int("open") ?? 0
        figures.unheard = row[0].int("unheard") ?? 0
        if let user = row[0].string("oldest_user"), let date = row[0].date("oldest_date"),
           let at = row[0].string("oldest_at").flatMap(Double.init) {
            figures.oldestUnheard = Oldest(userID: user, alertDate: date, since: Date(timeIntervalSince1970: at))
        }
        return figures
    }
}
