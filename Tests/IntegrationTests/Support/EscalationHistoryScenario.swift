import Foundation
import Testing
import Values
@testable import Store

/// Alerted streaks of known fate on 2026-01-10 … 2026-01-13 for escalation in the history report,
/// the metrics and `check`: each alert accepted at 09:00 in Shanghai (01:00 UTC) and recorded as
/// a run does (the trigger makes the streak's row), acknowledged at known delays, escalated and
/// declared unheard through `EscalationStore` as the daemon does, outcomes recorded.
///
/// The report's period is 2026-01-11 … 2026-01-13 (2026-01-10 lies before it):
///
/// | day | user | fate |
/// |---|---|---|
/// | 01-10 | h | escalated, unheard, then the user checked in (heard since) |
/// | 01-10 | i | escalated, unheard, then acknowledged (heard since) |
/// | 01-11 | a | acknowledged after 10 min (and by a second contact after 50 min) |
/// | 01-11 | b | acknowledged after 30 min, then "They're OK" |
/// | 01-11 | c | escalated after 3 h, acknowledged after 4 h, then "I couldn't reach them" |
/// | 01-12 | d | escalated, then unheard: nobody since |
/// | 01-12 | e | the user checked in: heard, no step |
/// | 01-13 | f | acknowledged after 2 h |
/// | 01-13 | g | escalated, waiting for an answer |
struct EscalationHistoryScenario {
    let db: TestDatabase
    /// Users by letter.
    let users: [String: String]

    /// Per day of the period: alerted, acknowledged, escalated, unheard, they're OK, couldn't reach them.
    static let counts: [String: [Int]] = [
        "2026-01-11": [3, 3, 1, 0, 1, 1],
        "2026-01-12": [2, 0, 1, 1, 0, 0],
        "2026-01-13": [2, 1, 1, 0, 0, 0],
    ]
    /// Per day of the period: the median and 90th percentile of the seconds to the first acknowledgement.
    /// 01-11: 600, 1800, 14400 → the middle one; 1800 + 0.8 × 12600. 01-13: one, 7200.
    static let times: [String: (Double, Double)?] = [
        "2026-01-11": (1800, 11880), "2026-01-12": nil, "2026-01-13": (7200, 7200),
    ]
    /// The period: 7 alerted, 4 acknowledged (600, 1800, 7200, 14400: median 4500, 90th percentile
    /// 7200 + 0.7 × 7200), 3 escalated, 1 unheard, 1 OK, 1 unreachable.
    static let totals = [7, 4, 3, 1, 1, 1]
    static let totalTimes = (4500.0, 12240.0)

    /// The first alert of `day`, as an instant: 09:00 in Shanghai.
    static func sent(_ day: String) -> Date {
        Date(timeIntervalSince1970: TimeInterval(CalendarDate(parsing: day)!.dayNumber) * 86_400 + 3600)
    }

    init(_ db: TestDatabase) throws {
        self.db = db
        var users: [String: String] = [:]
        // (user, alert date, L)
        let streaks = [("h", "2026-01-10", "2026-01-07"), ("i", "2026-01-10", "2026-01-07"), ("a", "2026-01-11", "2026-01-08"),
                       ("b", "2026-01-11", "2026-01-08"), ("c", "2026-01-11", "2026-01-08"), ("d", "2026-01-12", "2026-01-09"),
                       ("e", "2026-01-12", "2026-01-09"), ("f", "2026-01-13", "2026-01-10"), ("g", "2026-01-13", "2026-01-10")]
        let connection = db.connection
        for (key, day, last) in streaks {
            let user = try db.addUser(name: "用户" + key, email: "\(key)@example.com", checkIns: [last])
            users[key] = user
            for contact in ["\(key)1@example.com", "\(key)2@example.com"] {
                try db.query("""
                    INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, status, sent_at,
                                                   consecutive_miss_days, last_check_in_date, message_id)
                    VALUES ($1, $2::date, 'alert', 'email', $3, true, 'sent', $4::timestamptz, 2, $5::date, 'alert.' || $3)
                    """, [user, day, contact, CalendarDate.rfc3339(Self.sent(day)), last])
            }
        }
        self.users = users
        func at(_ key: String, hours: Double) -> Date {
            Self.sent(streaks.first { $0.0 == key }!.1).addingTimeInterval(hours * 3600)
        }
        func date(_ key: String) -> CalendarDate { CalendarDate(parsing: streaks.first { $0.0 == key }!.1)! }
        func acknowledge(_ key: String, contact: Int, hours: Double) throws {
            try db.query("""
                INSERT INTO sileme.acknowledgements (user_id, alert_date, contact, last_check_in_date, acknowledged_at)
                SELECT user_id, alert_date, $2, last_check_in_date, $3::timestamptz FROM sileme.escalations
                WHERE user_id = $1::uuid
                """, [users[key]!, "\(key)\(contact)@example.com", CalendarDate.rfc3339(at(key, hours: hours))])
        }
        func outcome(_ key: String, _ kind: String, hours: Double) throws {
            try db.query("UPDATE sileme.escalations SET outcome = $2, outcome_contact = $3, outcome_at = $4::timestamptz WHERE user_id = $1::uuid",
                         [users[key]!, kind, "\(key)1@example.com", CalendarDate.rfc3339(at(key, hours: hours))])
        }
        func escalate(_ key: String) throws {
            #expect(try EscalationStore.escalate(connection, userID: users[key]!, alertDate: date(key), at: at(key, hours: 3)))
        }
        func unheard(_ key: String) throws {
            #expect(try EscalationStore.declareUnheard(connection, userID: users[key]!, alertDate: date(key), at: at(key, hours: 6)))
        }
        func settle(_ key: String, hours: Double, closed: Bool = false) throws {
            #expect(try EscalationStore.settle(connection, userID: users[key]!, alertDate: date(key), closed: closed, at: at(key, hours: hours)))
        }
        try escalate("h"); try unheard("h"); try db.checkIn(users["h"]!, "2026-01-11")
        try escalate("i"); try unheard("i"); try acknowledge("i", contact: 1, hours: 8)
        try acknowledge("a", contact: 1, hours: 10.0 / 60); try acknowledge("a", contact: 2, hours: 50.0 / 60); try settle("a", hours: 1)
        try acknowledge("b", contact: 1, hours: 0.5); try outcome("b", "ok", hours: 1); try settle("b", hours: 1, closed: true)
        try escalate("c"); try acknowledge("c", contact: 1, hours: 4); try outcome("c", "unreachable", hours: 5)
        try escalate("d"); try unheard("d")
        try db.checkIn(users["e"]!, "2026-01-12"); try settle("e", hours: 3)
        try acknowledge("f", contact: 2, hours: 2); try settle("f", hours: 3)
        try escalate("g")
    }
}
