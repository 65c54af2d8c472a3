import Foundation
import Testing
@testable import Values
import Rule
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
        #expect(try CheckInQueue.isEmpty(db.connection), "the daemon's probe before its fold")
        // Appended only: the summary moves at the fold.
        try db.checkIn(kept, "2026-01-05")
        try db.checkIn(first, "2026-01-03")
        try db.checkIn(gone, "2026-01-06")
        #expect(try queued() == "3")
        #expect(try !CheckInQueue.isEmpty(db.connection))
        #expect(try last(kept) == "2026-01-01")
        #expect(try last(first) == nil)
        // A back-dated check-in and the deletion of the newest one, both before the fold.
        try db.checkIn(kept, "2026-01-04")
        try db.query("DELETE FROM check_ins WHERE user_id = $1 AND check_in_date = '2026-01-05'", [kept])
        #expect(try last(kept) == "2026-01-04", "the deletion recomputes the summary from check_ins at once")
        try db.query("DELETE FROM users WHERE id = $1", [gone])
        #expect(try CheckInQueue.fold(db.connection).isEmpty, "nobody was alerted")
        #expect(try queued() == "0")
        #expect(try CheckInQueue.isEmpty(db.connection))
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

    @Test("a plan reads the summary without the queue only in one snapshot whose queue is empty")
    func summaryAloneInOneSnapshot() throws {
        let db = try TestDatabase()
        let connection = db.connection
        let user = try db.addUser(name: "A", email: "a@example.com", checkIns: ["2026-01-08"])
        try CheckInQueue.fold(connection)
        let store = NotificationStore(owner: "test", claimLeaseSeconds: 60)
        let rule = MissRule(thresholdDays: 2, catchUpDays: 7)
        let runDate = CalendarDate(parsing: "2026-01-11")!
        let listed = { (summary: CheckInQueue.Summary) throws -> [String] in
            var users: [String] = []
            try store.streamCandidates(connection, runDate: runDate, rule: rule, summary: summary) { users.append($0.userID) }
            return users
        }
        #expect(try CheckInQueue.summary(connection) == .current, "outside a transaction each statement reads its own snapshot")
        try connection.transaction(readOnly: true) { () throws in
            #expect(try CheckInQueue.summary(connection) == .current, "read committed: each statement reads its own snapshot")
        }
        let app = try PGConnection(Secret(db.url), schema: .standard)
        try connection.transaction(readOnly: true, oneSnapshot: true) { () throws in
            #expect(try CheckInQueue.summary(connection) == .folded)
            // The app records a check-in meanwhile: queued and committed, after the snapshot.
            try app.execute("INSERT INTO check_ins (user_id, check_in_date) VALUES ($1, '2026-01-10')", [user])
            #expect(try listed(.folded) == [user], "as of the snapshot, which has not seen the check-in")
            #expect(try CheckInQueue.summary(connection) == .folded, "still the same snapshot")
        }
        try connection.transaction(readOnly: true, oneSnapshot: true) { () throws in
            #expect(try CheckInQueue.summary(connection) == .current, "the check-in waits in the queue")
            #expect(try listed(.current).isEmpty, "the queue's check-in of the 10th ends the streak")
        }
    }

    @Test("once folded, the summary alone lists and counts what the summary with the queue did before the fold")
    func summaryAloneAgreesWithQueue() throws {
        let db = try TestDatabase()
        let store = NotificationStore(owner: "test", claimLeaseSeconds: 60)
        let rule = MissRule(thresholdDays: 2, catchUpDays: 7)
        let runDate = CalendarDate(parsing: "2026-01-20")!
        var generator = SystemRandomNumberGenerator()
        let users = try (0..<40).map { index in
            try db.addUser(name: "U\(index)", email: "u\(index)@example.com",
                           checkIns: index % 10 == 0 ? [] : ["2026-01-0\(1 + index % 9)"])
        }
        try CheckInQueue.fold(db.connection)
        // Queued: new and back-dated check-ins, first check-ins, future-dated ones; pauses; an alert.
        for (index, user) in users.enumerated() {
            let day = Int.random(in: 1...28, using: &generator)
            switch index % 5 {
            case 0, 1: try db.query("INSERT INTO check_ins (user_id, check_in_date) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                                    [user, String(format: "2026-01-%02d", day)])
            case 2: try db.checkIn(user, "2026-03-01")
            case 3: try db.query("UPDATE users SET paused_until = $2 WHERE id = $1", [user, String(format: "2026-01-%02d", day)])
            default: try db.query("""
                INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days)
                VALUES ($1, '2026-01-12', true, 2)
                """, [user])
            }
        }
        #expect(try db.query("SELECT count(*) > 0 FROM sileme.check_in_queue").first?.first == "t")
        let read = { (summary: CheckInQueue.Summary) throws -> (rows: [String], stale: Int, future: Int) in
            var rows: [String] = []
            try store.streamCandidates(db.connection, runDate: runDate, rule: rule, summary: summary) {
                rows.append("\($0.userID) \($0.lastCheckIn) \($0.ignoredFutureCheckIn.map(\.description) ?? "-") \($0.notifiedInStreak)")
            }
            return (rows: rows.sorted(), stale: try store.countStale(db.connection, runDate: runDate, rule: rule, summary: summary),
                    future: try store.countFutureCheckIns(db.connection, runDate: runDate, rule: rule, summary: summary))
        }
        let before = try read(.current)
        try CheckInQueue.fold(db.connection)
        let after = try read(.folded)
        #expect(!before.rows.isEmpty && before.future > 0)
        #expect(after.rows == before.rows)
        #expect(after.stale == before.stale)
        #expect(after.future == before.future)
    }
}
