import Foundation
import Testing
import TestSupport
@testable import Store
import Values

/// Issue 52, part 5 (SPEC §22, "every wait bounded and named"): a run never waits without limit
/// on a lock, a session, a relay or another run — it says what it waits for and for how long, and
/// ends with an error naming the wait when the bound is passed; nothing is lost (a later run sends).
@Suite("Bounded waits", .enabled(if: TestEnvironment.enabled))
struct BoundedWaitsIntegrationTests {
    static let date = "2026-01-13"

    /// A `DATABASE_URL` whose sessions wait `seconds` for a lock (an operator's `lock_timeout`
    /// wins over the notifier's `PGConnection.lockWaitSeconds`, 20 s): the bound, made short.
    static func url(_ db: TestDatabase, lockTimeout seconds: Int) -> String {
        db.url + "?options=-c%20lock_timeout%3D\(seconds)s"
    }

    @Test("a session holding the run lock's row in an open transaction: --run-now waits at most lock_timeout, ends naming the wait; a later run sends")
    func runLockRowHeld() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "Row", email: mail.address("row"), checkIns: ["2026-01-10"])
        // A free lock row (its lease ran out), locked by a session that never ends its transaction.
        try db.query("INSERT INTO sileme.notifier_run_lock (id, holder, acquired_at, expires_at) VALUES (1, 'gone', now() - interval '1 hour', now() - interval '1 hour')")
        let stuck = try PGConnection(Secret(db.url), schema: .standard)
        try stuck.execute("BEGIN")
        try stuck.execute("SELECT * FROM sileme.notifier_run_lock FOR UPDATE")
        let env = try NotifierProcess.environment(database: db, ["DATABASE_URL": Self.url(db, lockTimeout: 2)])
        let started = Date()
        let result = try SMTPFaultIntegrationTests.run(env, ["--run-now", "--date", Self.date], bound: 20)
        #expect(Date().timeIntervalSince(started) < 15, "ended at the lock's bound")
        #expect(result.status != 0)
        #expect(result.stderr.contains("gave up waiting for a lock another database session holds, after 2s (lock_timeout")
                && result.stderr.contains("notifier_run_lock"), "\(result.stderr.suffix(1200))")
        print("The run lock's row held: \(result.stderr.split(separator: "\n").filter { $0.contains("lock_timeout") || $0.contains("CONTEXT") }.joined(separator: " | "))")
        #expect(try mail.deliveries().isEmpty)
        try stuck.execute("ROLLBACK")
        let later = try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env)
        #expect(later.status == 0, "\(later.stderr.suffix(800))")
        #expect(try db.logs(user).map(\.status) == ["sent"])
        #expect(try mail.deliveries().count == 1, "nothing lost, nothing twice")
    }

    @Test("a session holding the fold's lock: the run's fold waits at most lock_timeout, the run fails naming the fold; a later run sends")
    func foldLockHeld() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "Fold", email: mail.address("fold"), checkIns: ["2026-01-10"])
        let stuck = try PGConnection(Secret(db.url), schema: .standard)
        try stuck.execute("BEGIN")
        try stuck.execute("SELECT pg_advisory_xact_lock(hashtext('sileme_fold_check_ins'))")
        let env = try NotifierProcess.environment(database: db, ["DATABASE_URL": Self.url(db, lockTimeout: 2)])
        let started = Date()
        let result = try SMTPFaultIntegrationTests.run(env, ["--run-now", "--date", Self.date], bound: 20)
        #expect(Date().timeIntervalSince(started) < 15, "ended at the lock's bound")
        #expect(result.status != 0)
        #expect(result.stderr.contains("after 2s (lock_timeout") && result.stderr.contains("sileme_fold_check_ins"),
                "\(result.stderr.suffix(1200))")
        print("The fold's lock held: exit \(result.status): \(result.stderr.split(separator: "\n").filter { $0.contains("lock_timeout") || $0.contains("CONTEXT") }.joined(separator: " | "))")
        #expect(try mail.deliveries().isEmpty)
        try stuck.execute("ROLLBACK")
        let later = try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env)
        #expect(later.status == 0, "\(later.stderr.suffix(800))")
        #expect(try db.logs(user).map(\.status) == ["sent"])
        #expect(try mail.deliveries().count == 1)
    }

    @Test("a session holding the migration lock: migrate waits at most lock_timeout and names the lock; it applies once the lock is free")
    func migrationLockHeld() throws {
        let db = try TestDatabase(migrate: false)
        let stuck = try PGConnection(Secret(db.url), schema: .standard)
        try stuck.execute("BEGIN")
        try stuck.execute("SELECT pg_advisory_xact_lock(7345120001)")
        let session = try PGConnection(Secret(Self.url(db, lockTimeout: 1)), schema: .standard)
        #expect(session.lockTimeout == "1s", "the operator's lock_timeout wins")
        let started = Date()
        #expect {
            try Migrator(directory: TestDatabase.migrationsDirectory).migrate(session)
        } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.lockWait && "\(error)".contains("the migration lock (another `sileme-notifier migrate` is applying migrations)")
                && "\(error)".contains("after 1s (lock_timeout")
        }
        #expect(Date().timeIntervalSince(started) < 5)
        try stuck.execute("ROLLBACK")
        #expect(try Migrator(directory: TestDatabase.migrationsDirectory).migrate(session).applied.count > 10)
    }
}
