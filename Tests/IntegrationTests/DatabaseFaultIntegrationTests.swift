import Foundation
import Testing
@testable import Values
@testable import Store

/// Issue 6, PostgreSQL faults: the server restarted mid-run, down at the fire time, a statement
/// timeout. Each test runs on a cluster of its own (`PostgresCluster`) or holds its own lock, so
/// the shared test server is never disturbed.
@Suite("PostgreSQL faults", .enabled(if: TestEnvironment.enabled))
struct DatabaseFaultIntegrationTests {
    @Test("PostgreSQL restarted in the middle of a run: the run reconnects and finishes, every alert sent exactly once")
    func restartMidRun() throws {
        try Self.restartMidRun(through: nil)
    }

    /// 240 due users, PostgreSQL restarted while the run sends (directly, or through a PgBouncer
    /// in `pooler` mode in front of the cluster): the run reconnects and finishes, every alert
    /// sent exactly once.
    static func restartMidRun(through pooler: PgBouncer.Mode?) throws {
        let cluster = try PostgresCluster()
        let db = try TestDatabase(cluster: cluster)
        let mail = try Mailbox()
        let bouncer = try pooler.map { try PgBouncer(mode: $0, upstreamPort: String(cluster.port)) }
        try db.addUsers(count: 240, domain: mail.domain, lastCheckIn: "2026-01-10")
        // 40 mails a second over two connections: about six seconds of sending to restart into
        // (a restart takes a few seconds on a loaded machine).
        let env = try NotifierProcess.environment(database: db, [
            "SMTP_CONNECTIONS": "2", "SMTP_RATE_LIMIT": "40", "DATABASE_URL": bouncer?.url(db.name) ?? db.url,
        ])
        let (process, out, err) = try NotifierProcess.start(["--run-now", "--date", "2026-01-13"], environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(30) { try mail.deliveries().count >= 40 })
        try cluster.restart()
        let deliveredAtRestart = try mail.deliveries().count
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let result = NotifierProcess.finish(process, out, err)
        #expect(deliveredAtRestart < 240, "the restart happened mid-run (\(deliveredAtRestart) mails by then)")
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        if pooler == nil {
            #expect(result.stderr.contains("database connection lost during the run"), "the reconnect is logged")
        }
        let deliveries = try mail.deliveries()
        #expect(deliveries.count == 240, "no alert lost, none doubled")
        #expect(Set(deliveries.map(\.recipient)).count == 240)
        #expect(try db.query("SELECT count(*), count(*) FILTER (WHERE email_sent) FROM notification_logs").first == ["240", "240"])
        #expect(try db.query("SELECT status, sent::text FROM sileme.notifier_runs").first == ["completed", "240"])
    }

    @Test("PostgreSQL down at the fire time: the daemon retries with backoff and runs when it is back, the same day")
    func downAtFireTime() throws {
        let cluster = try PostgresCluster()
        let db = try TestDatabase(cluster: cluster)
        let mail = try Mailbox()
        let fire = DaemonIntegrationTests.localTime(offset: 5)
        try DaemonIntegrationTests.completedRun(db, on: fire.date.adding(days: -1))
        let users = try DaemonIntegrationTests.addDueUsers(db, mail, today: fire.date, count: 3)
        let notify = try NotifySocket()
        defer { notify.shutdown() }
        let env = try NotifierProcess.environment(database: db, ["NOTIFY_TIME": fire.time, "NOTIFY_SOCKET": notify.path])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(notify.waitFor(10) { $0.contains("READY=1") } != nil)
        try cluster.stop()
        let unavailable = notify.waitFor(20) { $0.contains("STATUS=database unavailable; retrying in 5 s") }
        #expect(unavailable != nil, "the fire found the database down and said so")
        #expect(try mail.deliveries().isEmpty)
        try cluster.start()
        #expect(try DaemonIntegrationTests.eventually(40) { try mail.deliveries().count == 3 }, "sent once the database is back")
        #expect(try DaemonIntegrationTests.eventually(5) {
            try db.query("SELECT count(*) FROM sileme.notifier_runs WHERE run_date = $1 AND status = 'completed'", [fire.date.description]).first?.first == "1"
        })
        for user in users { #expect(try db.logs(user).map(\.status) == ["sent"]) }
        kill(process.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0)
    }

    @Test("a statement timeout fails the run with the reason, sends nothing it cannot record, and the next run sends everything once")
    func statementTimeout() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUsers(count: 20, domain: mail.domain, lastCheckIn: "2026-01-10")
        // Another session holds the log table: the claim waits, and the server cancels it.
        let blocker = try PGConnection(Secret(db.url), schema: .standard)
        try blocker.execute("BEGIN")
        try blocker.execute("LOCK TABLE notification_logs IN ACCESS EXCLUSIVE MODE")
        let env = try NotifierProcess.environment(database: db, ["DATABASE_URL": db.url + "?options=-c%20statement_timeout%3D1500"])
        let blocked = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        try blocker.execute("ROLLBACK")
        #expect(blocked.status == 1)
        #expect(blocked.stderr.contains("canceling statement due to statement timeout"), "\(blocked.stderr.suffix(1500))")
        #expect(try mail.deliveries().isEmpty)
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE notification_date = '2026-01-13'").first?.first == "0")
        let rerun = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(rerun.status == 0)
        #expect(try mail.deliveries().count == 20)
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first?.first == "20")
    }

    @Test("a stop cancels the statement in progress at once, and the connection stays usable")
    func stopCancelsStatement() throws {
        let db = try TestDatabase()
        let connection = try PGConnection(Secret(db.url), schema: .standard)
        let stop = StopSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { stop.stop() }
        let started = Date()
        var state: String?
        do {
            _ = try connection.cancellable(on: stop) { try connection.execute("SELECT pg_sleep(30)") }
        } catch let error as DatabaseError {
            state = error.sqlState
        }
        #expect(state == "57014", "canceling statement due to user request")
        #expect(Date().timeIntervalSince(started) < 10, "cancelled, not slept out")
        #expect(try connection.execute("SELECT 1")[0].int(0) == 1)
        // Without a stop the value comes back, and the helper thread ends with the body.
        #expect(try connection.cancellable(on: StopSignal()) { try connection.execute("SELECT 42")[0].int(0) } == 42)
    }

    /// A deadlock made on purpose: a transaction holds row 2; a statement of its own locks row 1,
    /// then waits for row 2; the transaction then asks for row 1. The statement waited first, so
    /// its deadlock check fires first and it is the victim, rolled back whole: run again, it waits
    /// for the transaction's commit and does its work. Inside a transaction it would not be run
    /// again (the transaction is lost): the error is its caller's.
    @Test("a statement of its own chosen as a deadlock's victim is run again and does its work; inside a transaction the error is the caller's")
    func deadlockVictimRunsAgain() throws {
        let db = try TestDatabase()
        try db.query("CREATE TABLE deadlock_probe (id int PRIMARY KEY, v int NOT NULL)")
        try db.query("INSERT INTO deadlock_probe VALUES (1, 0), (2, 0)")
        let deadlocks = { try db.query("SELECT deadlocks::text FROM pg_stat_database WHERE datname = current_database()").first?.first ?? nil }
        let before = Int(try deadlocks() ?? "") ?? 0

        for inTransaction in [false, true] {
            let holder = try PGConnection(Secret(db.url), schema: .standard)
            let victim = Transfer(value: try PGConnection(Secret(db.url), schema: .standard))
            try holder.execute("BEGIN")
            try holder.execute("UPDATE deadlock_probe SET v = v + 1 WHERE id = 2")
            let outcome = Locked<Result<Void, DatabaseError>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                let result = Result<Void, DatabaseError> { () throws(DatabaseError) in
                    // Row 1 first, then row 2, which the holder has (one statement: in the scan's order).
                    let update = "UPDATE deadlock_probe SET v = v + 10 WHERE id = $1"
                    if inTransaction {
                        try victim.value.execute("BEGIN")
                        try victim.value.execute(update, ["1"])
                        try victim.value.execute(update, ["2"])
                        try victim.value.execute("COMMIT")
                    } else {
                        try victim.value.execute("UPDATE deadlock_probe SET v = v + 10 WHERE id IN (1, 2)")
                    }
                }
                outcome.withLock { $0 = result }
                done.signal()
            }.start()
            Thread.sleep(forTimeInterval: 0.3)  // the victim holds row 1 and waits for row 2
            try holder.execute("UPDATE deadlock_probe SET v = v + 1 WHERE id = 1")
            try holder.execute("COMMIT")
            done.wait()
            let result = try #require(outcome.withLock { $0 })
            if inTransaction {
                if case .failure(let error) = result { #expect(error.sqlState == "40P01") } else { Issue.record("the transaction's deadlock is its caller's") }
                try victim.value.execute("ROLLBACK")
                #expect(try db.query("SELECT v::text FROM deadlock_probe ORDER BY id") == [["12"], ["12"]], "the lost transaction changed nothing")
            } else {
                if case .failure(let error) = result { Issue.record("run again, the statement succeeds: \(error)") }
                #expect(try db.query("SELECT v::text FROM deadlock_probe ORDER BY id") == [["11"], ["11"]], "the holder's +1 and the victim's +10, once each")
            }
        }
        #expect((Int(try deadlocks() ?? "") ?? 0) - before == 2, "two deadlocks were detected")
    }
}
