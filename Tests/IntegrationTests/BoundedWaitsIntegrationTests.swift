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

    /// Each round adds `perRound` users due on `date` (last check-in three days before), then
    /// starts two `--run-now --date` for it at once: the second waits for the run lock, then finds
    /// them notified. Each run must end within `bound`; a run that does not is stopped with its
    /// threads' stacks and the server's sessions printed (what it waited for).
    @Test("150 rounds of two --run-now racing for the same date, with CPU load beside them: every run ends within 30 s, every alert goes out once")
    func racingRunNowSoak() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["SILEME_SOAK_ROUNDS"] ?? "") ?? 150
        let perRound = 2
        let bound: TimeInterval = 30
        let db = try TestDatabase()
        let mail = try Mailbox()
        let env = try NotifierProcess.environment(database: db, ["SMTP_CONNECTIONS": "2"])
        let load = try Self.busyLoops(2)
        defer { for pid in load { kill(pid, SIGKILL); waitpid(pid, nil, 0) } }
        var slowest: TimeInterval = 0
        var statuses: [Int32: Int] = [:]
        let started = Date()
        for round in 0..<rounds {
            try db.query("""
                WITH u AS (INSERT INTO users (name, emergency_email)
                           SELECT 'Soak ' || $1 || '.' || g, 'r' || $1 || 'u' || g || '@' || $2 FROM generate_series(1, $3::int) g RETURNING id)
                INSERT INTO check_ins (user_id, check_in_date) SELECT id, '2026-01-10'::date FROM u
                """, [String(round), mail.domain, String(perRound)])
            let runs = try (0..<2).map { _ in (try NotifierProcess.start(["--run-now", "--date", Self.date], environment: env), Date()) }
            for ((process, out, err), began) in runs {
                let deadline = began.addingTimeInterval(bound)
                while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
                if process.isRunning {
                    let stacks = Self.stacks(process.processIdentifier)
                    let sessions = (try? db.query("""
                        SELECT pid::text, application_name, state, wait_event_type || ':' || wait_event, left(query, 160)
                        FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                        """)) ?? []
                    kill(process.processIdentifier, SIGKILL)
                    let result = NotifierProcess.finish(process, out, err)
                    Issue.record("round \(round): a --run-now did not end within \(Int(bound)) s\nstderr: \(result.stderr.suffix(3000))\nsessions: \(sessions)\nstacks:\n\(stacks)")
                    return
                }
                let result = NotifierProcess.finish(process, out, err)
                slowest = max(slowest, Date().timeIntervalSince(began))
                statuses[result.status, default: 0] += 1
                if result.status != 0 { Issue.record("round \(round): exit \(result.status): \(result.stderr.suffix(1500))") }
            }
        }
        let users = rounds * perRound
        let deliveries = try mail.deliveries()
        #expect(deliveries.count == users, "every alert once: \(deliveries.count) mails for \(users) users")
        #expect(Set(deliveries.map(\.recipient)).count == users)
        #expect(try db.query("SELECT count(*)::text, count(*) FILTER (WHERE email_sent)::text FROM notification_logs").first
                == ["\(users)", "\(users)"])
        print("Soak: \(rounds) rounds of two racing --run-now in \(Int(Date().timeIntervalSince(started))) s beside \(load.count) busy loops; "
              + "slowest run \(String(format: "%.2f", slowest)) s; exit statuses \(statuses)")
    }

    /// A `DATABASE_URL` whose sessions wait `seconds` for a lock (an operator's `lock_timeout`
    /// wins over the notifier's `PGConnection.lockWaitSeconds`, 20 s): the bound, made short.
    static func url(_ db: TestDatabase, lockTimeout seconds: Int) -> String {
        db.url + "?options=-c%20lock_timeout%3D\(seconds)s"
    }

    @Test("a session holding the run lock's row in an open transaction: --run-now waits at most lock_timeout, ends naming the wait; a later run sends")
    func runLockRowHeld() throws {
        try Self.whileHeld("the run lock's row", naming: "notifier_run_lock", setUp: { db in
            // A free lock row (its lease ran out), locked by a session that never ends its transaction.
            try db.query("""
                INSERT INTO sileme.notifier_run_lock (id, holder, acquired_at, expires_at)
                VALUES (1, 'gone', now() - interval '1 hour', now() - interval '1 hour')
                """)
        }, holding: "SELECT * FROM sileme.notifier_run_lock FOR UPDATE")
    }

    @Test("a session holding the fold's lock: the run's fold waits at most lock_timeout, the run fails naming the fold; a later run sends")
    func foldLockHeld() throws {
        try Self.whileHeld("the fold's lock", naming: "sileme_fold_check_ins",
                           holding: "SELECT pg_advisory_xact_lock(hashtext('sileme_fold_check_ins'))")
    }

    /// A due user; a session that runs `holding` in a transaction it never ends; a `--run-now`
    /// with `lock_timeout` 2 s ends within 15 s, non-zero, its error naming the wait's bound and
    /// `lock` (PostgreSQL's CONTEXT) and sending nothing; once the session lets go, a later run
    /// sends the alert, once.
    static func whileHeld(_ what: String, naming lock: String, setUp: (TestDatabase) throws -> Void = { _ in },
                          holding: String) throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "Held", email: mail.address("held"), checkIns: ["2026-01-10"])
        try setUp(db)
        let stuck = try PGConnection(Secret(db.url), schema: .standard)
        try stuck.execute("BEGIN")
        try stuck.execute(holding)
        let env = try NotifierProcess.environment(database: db, ["DATABASE_URL": Self.url(db, lockTimeout: 2)])
        let started = Date()
        let result = try SMTPFaultIntegrationTests.run(env, ["--run-now", "--date", Self.date], bound: 20)
        #expect(Date().timeIntervalSince(started) < 15, "ended at the lock's bound")
        #expect(result.status != 0)
        #expect(result.stderr.contains("gave up waiting for a lock another database session holds, after 2s (lock_timeout")
                && result.stderr.contains(lock), "\(result.stderr.suffix(1200))")
        let lines = result.stderr.split(separator: "\n").filter { $0.contains("lock_timeout") || $0.contains("CONTEXT") }
        print("\(what) held: exit \(result.status): \(lines.joined(separator: " | "))")
        #expect(try mail.deliveries().isEmpty)
        try stuck.execute("ROLLBACK")
        let later = try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env)
        #expect(later.status == 0, "\(later.stderr.suffix(800))")
        #expect(try db.logs(user).map(\.status) == ["sent"])
        #expect(try mail.deliveries().count == 1, "nothing lost, nothing twice")
    }

    @Test("the run lock held by a live run: a taker waits at most its bound, says whom it waits for, and ends naming the holder")
    func runLockWaitBounded() throws {
        let db = try TestDatabase()
        let holder = try #require(try RunLock.take(Secret(db.url), schema: .standard, leaseSeconds: 120))
        defer { holder.release() }
        let said = Locked<[String]>([])
        let started = Date()
        #expect {
            _ = try RunLock.take(Secret(db.url), schema: .standard, leaseSeconds: 120,
                                 waiting: .upTo(1.5, StopSignal(), say: { line in said.withLock { $0.append(line) } }))
        } throws: { error in
            guard let exceeded = error as? BoundedWait.Exceeded else { return false }
            return exceeded.bound == 1.5 && "\(exceeded)".contains("the run lock (notifier_run_lock) held by ")
                && "\(exceeded)".contains(":\(ProcessInfo.processInfo.processIdentifier):")
        }
        let waited = Date().timeIntervalSince(started)
        // Bounded, not timed: on a loaded machine the polls around the bound may run late.
        #expect(waited >= 1.4 && waited < 10, "waited its bound: \(waited) s")
        #expect(said.withLock { $0 }.first?.hasPrefix("another run is in progress on this database (the run lock (notifier_run_lock) held by ") == true,
                "\(said.withLock { $0 })")
        // The session of a direct connection carries the notifier's own bound.
        let session = try PGConnection(Secret(db.url), schema: .standard)
        #expect(session.lockTimeout == "\(PGConnection.lockWaitSeconds)s")
        #expect(try session.execute("SHOW lock_timeout")[0].string("lock_timeout") == "20s")
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
        #expect(Date().timeIntervalSince(started) < 15, "ended at the lock's bound, not at the holder's end")
        try stuck.execute("ROLLBACK")
        #expect(try Migrator(directory: TestDatabase.migrationsDirectory).migrate(session).applied.count > 10)
    }

    /// `count` processes spinning on a core each until killed: CPU load beside the runs.
    static func busyLoops(_ count: Int) throws -> [pid_t] {
        try (0..<count).map { _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "while :; do :; done"]
            try process.run()
            return process.processIdentifier
        }
    }

    /// Every thread's stack of `pid` (gdb, when installed), else each thread's name and kernel wait.
    static func stacks(_ pid: Int32) -> String {
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
        gdb.arguments = ["-p", String(pid), "-batch", "-ex", "thread apply all bt 25"]
        let out = Pipe()
        gdb.standardOutput = out
        gdb.standardError = FileHandle.nullDevice
        if (try? gdb.run()) != nil {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            gdb.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.map { task in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? "?"
            let wchan = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/wchan", encoding: .utf8)) ?? "?"
            return "\(task) \(name.trimmingCharacters(in: .whitespacesAndNewlines)): \(wchan)"
        }.joined(separator: "\n")
    }
}
