import Foundation
import Testing
@testable import Store
import Values

/// The daemon's look a minute on real PostgreSQL: what it reads stays the same size after a day of
/// many mails, whatever the statistics know of that day.
@Suite("The daemon's look on real servers", .enabled(if: TestEnvironment.enabled))
struct DaemonLookIntegrationTests {
    /// `count` mails of `date` sent, a contact each, as a run sends them: each row claimed
    /// (`sending`), then recorded sent.
    static func sent(_ db: TestDatabase, user: String, date: CalendarDate, count: Int) throws {
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, consecutive_miss_days,
                                           status, attempts, claimed_at, recipient_masked)
            SELECT $1, $2::date, 'alert', 'email', 'c' || i || '@example.com', false, 2, 'sending', 1, now(), 'c***@example.com'
            FROM generate_series(1, $3::int) i
            """, [user, date.description, String(count)])
        try db.query("""
            UPDATE notification_logs SET status = 'sent', email_sent = true, message_id = '<' || id || '@sileme.test>'
            WHERE notification_date = $1::date AND status = 'sending'
            """, [date.description])
    }

    @Test("the next retry reads the day's unfinished rows, not its 2,000 sent mails, while the statistics know nothing of the day")
    func nextRetryReadsTheOpenRows() throws {
        let db = try TestDatabase()
        // The statistics as a young table, or a big day before autovacuum's ANALYZE, leave them:
        // yesterday's rows only (and no ANALYZE by the server during the test).
        try db.query("ALTER TABLE notification_logs SET (autovacuum_enabled = false)")
        let day = try #require(CalendarDate(parsing: "2026-03-10"))
        let user = try db.addUser(name: "甲", email: "a@example.com")
        try Self.sent(db, user: user, date: day.adding(days: -1), count: 200)
        try db.query("VACUUM ANALYZE notification_logs")
        try Self.sent(db, user: user, date: day, count: 2_000)
        // One mail of the day waiting for its retry.
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, consecutive_miss_days,
                                           status, attempts, next_attempt_at, recipient_masked)
            VALUES ($1, $2::date, 'alert', 'email', 'late@example.com', false, 2, 'retry', 1, '2026-03-10 12:00:00+00', 'l***@example.com')
            """, [user, day.description])

        let claims = ClaimSQL(leaseSeconds: 300)
        let state = try DaemonState.read(db.connection, dates: [day.adding(days: -1), day], claims: claims)
        #expect(state.nextRetry == ISO8601DateFormatter().date(from: "2026-03-10T12:00:00Z"))

        // What the statement reads, once the first read marked the claims' old entries dead (no
        // vacuum since): a few pages, where the day's rows fill dozens — for the day alone (the
        // daemon's dates at most instants) and with the day before. (On 002's two-column index
        // the planner chose the whole date index for the day alone: 51 buffers, every row.)
        let pages = try #require(Int(try db.query("""
            SELECT count(DISTINCT (ctid::text::point)[0]) FROM notification_logs WHERE notification_date = $1::date
            """, [day.description]).first?.first.flatMap { $0 } ?? ""))
        #expect(pages > 30)
        let explain = SQLStatement("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + DaemonState.nextRetrySQL(claims: claims))
        for dates in ["{\(day)}", "{\(day.adding(days: -1)),\(day)}"] {
            let text = try #require(try db.query(explain.text, explain.parameters(["dates": dates])).first?.first ?? nil)
            let plan = try #require((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])?.first?["Plan"] as? [String: Any])
            let buffers = (plan["Shared Hit Blocks"] as? Int ?? 0) + (plan["Shared Read Blocks"] as? Int ?? 0)
            #expect(buffers * 4 <= pages, "\(dates): read \(buffers) buffers, the day's rows fill \(pages) pages: \(text)")
        }
    }
}
