import Foundation
import Store
import Values

extension HistoryStore {
    /// Escalation per alert date of the period (`scope`: its days, one user or everyone, a zone's
    /// users or all): one statement, a range read of `escalations_date_idx` grouped by day, each
    /// streak's first acknowledgement a probe of the acknowledgements' key. Every day of the
    /// period comes back, zero where nothing was alerted. The delays to the first acknowledgement
    /// come as a list per day (one number per acknowledged streak: alerts are a small part of the
    /// rows, acknowledged ones smaller still), for `DelaySummary` to take their median and 90th
    /// percentile. Reads only.
    func escalation(_ db: PGConnection, request: HistoryRequest, scope: [String: String?]) throws -> [EscalationDay] {
        var days = request.days.map { EscalationDay(date: $0) }
        try db.stream(SQLStatement("""
            SELECT e.alert_date - DATE '1970-01-01' AS day, count(*) AS alerted,
                   count(*) FILTER (WHERE e.escalated_at IS NOT NULL) AS escalated,
                   count(*) FILTER (WHERE e.unheard_at IS NOT NULL) AS unheard,
                   count(*) FILTER (WHERE e.outcome = 'ok') AS outcome_ok,
                   count(*) FILTER (WHERE e.outcome = 'unreachable') AS outcome_unreachable,
                   -- Only the acknowledged: greatest() would make a missing delay 0.
                   string_agg(greatest(0, extract(epoch FROM k.first_at - e.first_sent_at))::text, ',')
                       FILTER (WHERE k.first_at IS NOT NULL) AS delays
            FROM sileme.escalations e
            LEFT JOIN LATERAL (SELECT min(a.acknowledged_at) AS first_at FROM sileme.acknowledgements a
                               WHERE a.user_id = e.user_id AND a.alert_date = e.alert_date) k ON true
            WHERE e.alert_date BETWEEN $from::date AND $to::date AND ($user_id::uuid IS NULL OR e.user_id = $user_id::uuid)
              AND \(Self.inSlots("e.user_id"))
            GROUP BY e.alert_date
            """), scope) { row in
            guard let number = row.int("day") else { return }
            let i = CalendarDate(dayNumber: number).days(since: request.from)
            guard days.indices.contains(i) else { return }
            days[i].alerted = row.int("alerted") ?? 0
            days[i].escalated = row.int("escalated") ?? 0
            days[i].unheard = row.int("unheard") ?? 0
            days[i].outcomeOK = row.int("outcome_ok") ?? 0
            days[i].outcomeUnreachable = row.int("outcome_unreachable") ?? 0
            days[i].delays = (row.string("delays") ?? "").split(separator: ",").compactMap { Double($0) }.sorted()
        }
        return days
    }
}
