import Foundation
import Testing
@testable import Values
@testable import Store
@testable import Delivery

/// Migration 004's `user_last_check_in`: once the check-in queue (migration 012) is folded, it
/// must always equal `max(check_in_date)` per user.
@Suite("Last check-in summary on real PostgreSQL", .enabled(if: TestEnvironment.enabled))
struct LastCheckInIntegrationTests {
    /// Rows where the summary and the aggregate disagree after a fold (empty when they agree).
    static func disagreements(_ db: TestDatabase) throws -> [[String?]] {
        try CheckInQueue.fold(db.connection)
        return try db.query("""
            SELECT coalesce(s.user_id, a.user_id)::text, s.last_check_in_date::text, a.last::text
            FROM sileme.user_last_check_in s
            FULL JOIN (SELECT user_id, max(check_in_date) AS last FROM check_ins GROUP BY user_id) a ON a.user_id = s.user_id
            WHERE s.last_check_in_date IS DISTINCT FROM a.last
            """)
    }

    @Test("inserts, duplicates, back-dated check-ins, updates, deletes and truncate keep it equal to max(check_in_date)")
    func agreesWithAggregate() throws {
        let db = try TestDatabase()
        let users = try (0..<20).map { try db.addUser(name: "U\($0)", email: "u\($0)@example.com") }
        var generator = SystemRandomNumberGenerator()
        for step in 0..<600 {
            let user = users.randomElement(using: &generator)!
            let day = "2026-01-\(String(format: "%02d", Int.random(in: 1...28, using: &generator)))"
            switch step % 6 {
            case 0, 1:  // a new check-in, possibly back-dated; duplicates are ignored as the app does
                try db.query("INSERT INTO check_ins (user_id, check_in_date) VALUES ($1, $2) ON CONFLICT DO NOTHING", [user, day])
            case 2:  // a duplicate that the unique key rejects: the failed statement changes nothing
                _ = try? db.query("INSERT INTO check_ins (user_id, check_in_date) SELECT user_id, check_in_date FROM check_ins WHERE user_id = $1 LIMIT 1", [user])
            case 3:  // delete the latest check-in
                try db.query("DELETE FROM check_ins WHERE id = (SELECT id FROM check_ins WHERE user_id = $1 ORDER BY check_in_date DESC LIMIT 1)", [user])
            case 4:  // move a check-in to another date (or fail on the unique key)
                _ = try? db.query("UPDATE check_ins SET check_in_date = $2 WHERE id = (SELECT min(id) FROM check_ins WHERE user_id = $1)", [user, day])
            default:  // move a check-in to another user
                let other = users.randomElement(using: &generator)!
                _ = try? db.query("UPDATE check_ins SET user_id = $2 WHERE id = (SELECT max(id) FROM check_ins WHERE user_id = $1)", [user, other])
            }
            // Folds between the steps: a deletion or a move finds its user's check-ins queued or folded.
            if step % 7 == 6 { try CheckInQueue.fold(db.connection) }
            if step % 50 == 49 { #expect(try Self.disagreements(db).isEmpty, "after step \(step)") }
        }
        #expect(try Self.disagreements(db).isEmpty)
        #expect(try db.query("SELECT count(*) FROM sileme.user_last_check_in").first?.first != "0")
        try db.query("DELETE FROM check_ins WHERE user_id = $1", [users[0]])
        #expect(try Self.disagreements(db).isEmpty)
        try db.query("TRUNCATE check_ins")
        #expect(try db.query("SELECT count(*) FROM sileme.user_last_check_in").first?.first == "0")
    }

    @Test("concurrent inserts, deletes and folds for the same users from three sessions stay consistent")
    func concurrentSessions() throws {
        let db = try TestDatabase()
        let users = try (0..<5).map { try db.addUser(name: "C\($0)", email: "c\($0)@example.com") }
        let url = db.url
        let failures = Locked(0)
        let writing = Locked(2)
        WorkerPool.run(count: 3, name: "checkins") { worker in
            guard let connection = try? PGConnection(Secret(url), schema: .standard) else { failures.withLock { $0 += 1 }; return }
            if worker == 2 {
                // A daemon folding as fast as it can while the two sessions insert and delete.
                while writing.withLock({ $0 }) > 0 {
                    do { try CheckInQueue.fold(connection) } catch { failures.withLock { $0 += 1 } }
                }
                return
            }
            defer { writing.withLock { $0 -= 1 } }
            for step in 0..<300 {
                let user = users[(step + worker) % users.count]
                let day = "2026-02-\(String(format: "%02d", (step * 7 + worker * 3) % 28 + 1))"
                if (step + worker) % 3 == 0 {
                    _ = try? connection.execute("DELETE FROM check_ins WHERE id = (SELECT id FROM check_ins WHERE user_id = $1 ORDER BY check_in_date DESC LIMIT 1)", [user])
                } else {
                    _ = try? connection.execute("INSERT INTO check_ins (user_id, check_in_date) VALUES ($1, $2) ON CONFLICT DO NOTHING", [user, day])
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try Self.disagreements(db).isEmpty)
    }

    @Test("last_notified_date equals the latest accepted notification through inserts, updates and deletes")
    func lastNotified() throws {
        let db = try TestDatabase()
        let users = try (0..<10).map { try db.addUser(name: "N\($0)", email: "n\($0)@example.com", checkIns: ["2026-01-01"]) }
        // A notification for a user whose summary row does not exist yet, then the first check-in.
        let late = try db.addUser(name: "Late", email: "late@example.com")
        try db.query("INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days) VALUES ($1, '2026-01-05', true, 2)", [late])
        try db.checkIn(late, "2026-01-02")
        var generator = SystemRandomNumberGenerator()
        for step in 0..<400 {
            let user = users.randomElement(using: &generator)!
            let day = "2026-01-\(String(format: "%02d", Int.random(in: 2...28, using: &generator)))"
            switch step % 4 {
            case 0, 1:
                try db.query("""
                    INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days)
                    VALUES ($1, $2, $3, 2) ON CONFLICT (user_id, notification_date, kind, channel, contact) DO UPDATE SET email_sent = EXCLUDED.email_sent
                    """, [user, day, step % 3 == 0 ? "false" : "true"])
            case 2:
                try db.query("UPDATE notification_logs SET email_sent = NOT email_sent WHERE id = (SELECT max(id) FROM notification_logs WHERE user_id = $1)", [user])
            default:
                try db.query("DELETE FROM notification_logs WHERE id = (SELECT id FROM notification_logs WHERE user_id = $1 ORDER BY notification_date DESC LIMIT 1)", [user])
            }
        }
        try CheckInQueue.fold(db.connection)
        let wrong = try db.query("""
            SELECT s.user_id::text FROM sileme.user_last_check_in s
            WHERE s.last_notified_date IS DISTINCT FROM
                  (SELECT max(notification_date) FROM notification_logs n WHERE n.user_id = s.user_id AND n.email_sent)
            """)
        #expect(wrong.isEmpty)
        #expect(try db.query("SELECT last_notified_date::text FROM sileme.user_last_check_in WHERE user_id = $1", [late]).first?.first == "2026-01-05")
    }

    @Test("a check-in waits in the queue until a fold; a check-in deleted or a user deleted before the fold is not brought back")
    func queueAndFold() throws {
        let db = try TestDatabase()
        let last = { (user: String) in try db.query("SELECT last_check_in_date::text FROM sileme.user_last_check_in WHERE user_id = $1", [user]).first?.first }
        let queued = { try db.query("SELECT count(*) FROM sileme.check_in_queue").first?.first }
        let kept = try db.addUser(name: "Kept", email: "kept@example.com", checkIns: ["2026-01-01"])
        let first = try db.addUser(name: "First", email: "first@example.com")
        let gone = try db.addUser(name: "Gone", email: "gone@example.com", checkIns: ["2026-01-01"])
        try CheckInQueue.fold(db.connection)
        #expect(try last(kept) == "2026-01-01")
        #expect(try queued() == "0")
        // Appended only: the summary moves at the fold.
        try db.checkIn(kept, "2026-01-05")
        try db.checkIn(first, "2026-01-03")
        try db.checkIn(gone, "2026-01-06")
        #expect(try queued() == "3")
        #expect(try last(kept) == "2026-01-01")
        #expect(try last(first) == nil)
        // A back-dated check-in and the deletion of the newest one, both before the fold.
        try db.checkIn(kept, "2026-01-04")
        try db.query("DELETE FROM check_ins WHERE user_id = $1 AND check_in_date = '2026-01-05'", [kept])
        #expect(try last(kept) == "2026-01-04", "the deletion recomputes the summary from check_ins at once")
        try db.query("DELETE FROM users WHERE id = $1", [gone])
        #expect(try CheckInQueue.fold(db.connection).isEmpty, "nobody was alerted")
        #expect(try queued() == "0")
        #expect(try last(kept) == "2026-01-04")
        #expect(try last(first) == "2026-01-03")
        #expect(try db.query("SELECT count(*) FROM sileme.user_last_check_in WHERE user_id = $1", [gone]).first?.first == "0")
        #expect(try Self.disagreements(db).isEmpty)
        // TRUNCATE empties the queue with the summary.
        try db.checkIn(kept, "2026-01-09")
        try db.query("TRUNCATE check_ins")
        #expect(try queued() == "0")
    }

    @Test("migrating a database that already has check-ins backfills the summary")
    func backfill() throws {
        let db = try TestDatabase(migrate: false)
        try db.createDesignDocTables(only: ["users", "check_ins"])
        try db.connection.executeScript("""
            INSERT INTO users (id, name, emergency_email) SELECT gen_random_uuid(), 'u' || g, 'u' || g || '@example.com' FROM generate_series(1, 50) g;
            INSERT INTO check_ins (user_id, check_in_date) SELECT id, DATE '2026-01-01' + (random() * 30)::int FROM users, generate_series(1, 5) ON CONFLICT DO NOTHING;
            """)
        try Migrator(directory: TestDatabase.migrationsDirectory).migrate(db.connection)
        #expect(try db.query("SELECT count(*) FROM sileme.user_last_check_in").first?.first == "50")
        #expect(try Self.disagreements(db).isEmpty)
    }
}
