import Foundation
import Testing
@testable import Values
@testable import Store
import Config

/// The notifier through a real PgBouncer in session and in transaction pooling mode (what
/// Supabase's pooled connection strings are): claims and the run lock hold leases instead of
/// relying on a session, so racing runs still send each alert once and a killed run neither
/// blocks the next one nor loses its claims. Every run is bounded by a deadline.
@Suite("Through a connection pooler", .enabled(if: TestEnvironment.enabled), .serialized)
struct PoolerIntegrationTests {
    static let date = "2026-01-13"

    @Test("a pooled connection is told from a direct one (the start-up key is the pooler's)", arguments: PgBouncer.Mode.allCases)
    func detection(_ mode: PgBouncer.Mode) throws {
        let db = try TestDatabase()
        let pooler = try PgBouncer(mode: mode)
        #expect(try PGConnection(Secret(pooler.url(db.name)), schema: .standard).isDirect == false, "\(pooler.log)")
        #expect(try PGConnection(Secret(db.url), schema: .standard).isDirect == true)
    }

    @Test("migrate, check, the dry run and report work through the pooler", arguments: PgBouncer.Mode.allCases)
    func commands(_ mode: PgBouncer.Mode) throws {
        let db = try TestDatabase(migrate: false)
        let mail = try Mailbox()
        let pooler = try PgBouncer(mode: mode)
        let env = try NotifierProcess.environment(database: db, ["DATABASE_URL": pooler.url(db.name)])
        for _ in 0..<2 {
            let migrate = try SMTPFaultIntegrationTests.run(env, ["migrate"], bound: 60)
            #expect(migrate.status == 0, "\(migrate.stderr)")
        }
        try db.addUser(name: "Pooled", email: mail.address("pooled"), checkIns: ["2026-01-10"])
        #expect(try SMTPFaultIntegrationTests.run(env, ["check"], bound: 60).status == 0)
        let dry = try SMTPFaultIntegrationTests.run(env, ["--run-now", "--dry-run", "--date", Self.date, "--format", "json"], bound: 60)
        #expect(dry.status == 0)
        #expect(dry.stdout.contains(mail.domain.prefix(4)) || dry.stdout.contains("\"send\""), "\(dry.stdout.prefix(600))")
        #expect(try SMTPFaultIntegrationTests.run(env, ["--run-now", "--date", Self.date], bound: 60).status == 0)
        #expect(try SMTPFaultIntegrationTests.run(env, ["report", "--from", "2026-01-10", "--to", Self.date, "--format", "json"], bound: 60).status == 0)
        #expect(try mail.deliveries().count == 1)
    }

    @Test("two runs racing on 200 due users through the pooler send 200 mails", arguments: PgBouncer.Mode.allCases)
    func racingRuns(_ mode: PgBouncer.Mode) throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUsers(count: 200, domain: mail.domain, lastCheckIn: "2026-01-10")
        let pooler = try PgBouncer(mode: mode)
        let env = try NotifierProcess.environment(database: db, ["DATABASE_URL": pooler.url(db.name), "SMTP_CONNECTIONS": "3"])
        let runs = try (0..<2).map { _ in try NotifierProcess.start(["--run-now", "--date", Self.date], environment: env) }
        defer { for run in runs where run.0.isRunning { kill(run.0.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(90)
        while runs.contains(where: { $0.0.isRunning }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let results = runs.map { NotifierProcess.finish($0.0, $0.1, $0.2) }
        for result in results { #expect(result.status == 0, "\(result.stderr.suffix(1200))") }
        #expect(try mail.deliveries().count == 200)
        #expect(Set(try mail.deliveries().map(\.recipient)).count == 200)
        #expect(try db.query("SELECT count(*) FILTER (WHERE email_sent), count(*) FROM notification_logs").first == ["200", "200"])
        #expect(try db.query("SELECT sum(sent) FROM sileme.notifier_runs").first?.first == "200")
    }

    @Test("a run killed mid-dispatch, then a rerun once the lease ran out: every due user mailed, duplicates only in the crash window, no hang",
          arguments: PgBouncer.Mode.allCases)
    func killedThenRerun(_ mode: PgBouncer.Mode) throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUsers(count: 200, domain: mail.domain, lastCheckIn: "2026-01-10")
        let pooler = try PgBouncer(mode: mode)
        let env = try NotifierProcess.environment(database: db, [
            "DATABASE_URL": pooler.url(db.name), "SMTP_CONNECTIONS": "3", "SMTP_RATE_LIMIT": "50", "CLAIM_LEASE_SECONDS": "3",
        ])
        let (process, out, err) = try NotifierProcess.start(["--run-now", "--date", Self.date], environment: env)
        #expect(try DaemonIntegrationTests.eventually(20) { try mail.deliveries().count >= 20 })
        kill(process.processIdentifier, SIGKILL)
        _ = NotifierProcess.finish(process, out, err)
        Thread.sleep(forTimeInterval: 0.3)  // a DATA complete at the kill is answered
        let sent = Set(try db.query("SELECT message_id FROM notification_logs WHERE email_sent").compactMap { $0[0].map { "<\($0)>" } })
        let inFlight = try mail.deliveries().filter { !sent.contains($0.messageID ?? "") }.count
        let left = try db.query("SELECT status, count(*)::text FROM notification_logs GROUP BY status ORDER BY status")
        let mailed = try mail.deliveries().count
        #expect(left.contains { $0.first == "sending" }, "the killed run left claims behind: \(left), \(mailed) mails")
        // Before the lease ran out a rerun must not hang: it waits for the lock, then finishes.
        let early = try SMTPFaultIntegrationTests.run(env, ["--run-now", "--date", Self.date], bound: 60)
        #expect([0, 75].contains(early.status), "\(early.stderr.suffix(1200))")
        Thread.sleep(forTimeInterval: 3.5)
        var unlimited = env
        unlimited["SMTP_RATE_LIMIT"] = nil
        let rerun = try SMTPFaultIntegrationTests.run(unlimited, ["--run-now", "--date", Self.date], bound: 60)
        #expect(rerun.status == 0, "\(rerun.stderr.suffix(1200))")
        #expect(try db.query("SELECT count(*), count(*) FILTER (WHERE email_sent) FROM notification_logs").first == ["200", "200"])
        let deliveries = try mail.deliveries()
        let byRecipient = Dictionary(grouping: deliveries, by: \.recipient)
        #expect(byRecipient.count == 200, "no alert lost")
        #expect(deliveries.count == 200 + inFlight, "the only duplicates are the mails in flight at the kill")
        #expect(inFlight <= 3, "at most one in flight per SMTP connection")
        for (recipient, copies) in byRecipient where copies.count > 1 {
            #expect(Set(copies.map(\.messageID)).count == 1, "\(recipient): resent with the same Message-ID")
        }
    }

    /// Session mode with a pool smaller than the sessions a run holds at most (`DatabaseSessions`:
    /// 7 with the default 4 senders): a run killed with SIGKILL after 5 mails, then a rerun. Each
    /// finishes with the senders that got a session, or — with a pool too small for one sender —
    /// fails within `PGConnection.sessionWaitSeconds` naming the settings. Never a hang: every
    /// process is bounded and killed at its bound (the rerun used to wait for ever for its 7th).
    @Test("session mode with a pool of 2, 4, 6 or PgBouncer's default: a run killed mid-send and its rerun finish or fail at once, never hang",
          arguments: [2, 4, 6, nil] as [Int?])
    func smallPool(_ poolSize: Int?) throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUsers(count: 40, domain: mail.domain, lastCheckIn: "2026-01-10")
        let pooler = try PgBouncer(mode: .session, poolSize: poolSize)
        let env = try NotifierProcess.environment(database: db, [
            "DATABASE_URL": pooler.url(db.name), "SMTP_RATE_LIMIT": "10", "CLAIM_LEASE_SECONDS": "3",
        ])
        #expect(DatabaseSessions(senders: 4, ackPage: false, separateListenURL: false).run == 7)
        if let poolSize, poolSize < DatabaseSessions.minimumForRun {
            let started = Date()
            let run = try SMTPFaultIntegrationTests.run(env, ["--run-now", "--date", Self.date], bound: 60)
            #expect(run.status == 69, "the database unavailable to this run: \(run.stderr.suffix(600))")
            #expect(run.stderr.contains("no database session within") && run.stderr.contains("SMTP_CONNECTIONS")
                    && run.stderr.contains("default_pool_size"), "\(run.stderr.suffix(1500))")
            #expect(Date().timeIntervalSince(started) < 3 * PGConnection.sessionWaitSeconds, "fails at once, not after minutes")
            #expect(try mail.deliveries().isEmpty)
            let check = try SMTPFaultIntegrationTests.run(env, ["check"], bound: 60)
            #expect(check.stderr.contains("ok   database sessions: held at most: a run 7") && check.stderr.contains("must allow 14"),
                    "\(check.stderr)")
            return
        }
        try Self.killAfterFiveMails(["--run-now", "--date", Self.date], env, mail, pooler)
        var unlimited = env
        unlimited["SMTP_RATE_LIMIT"] = nil
        let rerun = try SMTPFaultIntegrationTests.run(unlimited, ["--run-now", "--date", Self.date], bound: 90)
        #expect(rerun.status == 0, "\(rerun.stderr.suffix(1500)) \(pooler.log.suffix(1500))")
        #expect(Set(try mail.deliveries().map(\.recipient)).count == 40, "every due user mailed")
        #expect(try db.query("SELECT count(*) FILTER (WHERE email_sent) FROM notification_logs").first == ["40"])
    }

    /// Starts the notifier with `arguments`, kills it with SIGKILL once 5 mails arrived, and waits
    /// until its run lock and claims are free (`CLAIM_LEASE_SECONDS` = 3).
    static func killAfterFiveMails(_ arguments: [String], _ env: [String: String], _ mail: Mailbox, _ pooler: PgBouncer) throws {
        let (process, out, err) = try NotifierProcess.start(arguments, environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let sending = try DaemonIntegrationTests.eventually(40) { try mail.deliveries().count >= 5 }
        kill(process.processIdentifier, SIGKILL)
        let killed = NotifierProcess.finish(process, out, err)
        #expect(sending, "5 mails before the kill: \(killed.stderr.suffix(1500)) \(pooler.log.suffix(1500))")
        Thread.sleep(forTimeInterval: 3.5)
    }

    /// The daemon under a session-mode pool of 6 (it holds 14 at most: `DatabaseSessions`): killed
    /// with SIGKILL after 5 mails, restarted once the lease ran out, it catches up every due user
    /// with the sessions the pool has (its fold, all-clear passes and fewer senders beside the run)
    /// and stops on SIGTERM.
    @Test("the daemon under a session-mode pool of 6: killed mid-send, restarted, every due user mailed, stops on SIGTERM")
    func daemonSmallPool() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = DaemonIntegrationTests.localTime(offset: -3600)
        try DaemonIntegrationTests.addDueUsers(db, mail, today: fire.date, count: 40)
        let pooler = try PgBouncer(mode: .session, poolSize: 6)
        let env = try NotifierProcess.environment(database: db, [
            "DATABASE_URL": pooler.url(db.name), "NOTIFY_TIME": fire.time, "SMTP_RATE_LIMIT": "10", "CLAIM_LEASE_SECONDS": "3",
        ])
        try Self.killAfterFiveMails([], env, mail, pooler)
        var unlimited = env
        unlimited["SMTP_RATE_LIMIT"] = nil
        let again = try NotifierProcess.start([], environment: unlimited)
        defer { if again.0.isRunning { kill(again.0.processIdentifier, SIGKILL) } }
        let all = try DaemonIntegrationTests.eventually(60) { Set(try mail.deliveries().map(\.recipient)).count == 40 }
        kill(again.0.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while again.0.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let stoppedInTime = !again.0.isRunning
        if !stoppedInTime { kill(again.0.processIdentifier, SIGKILL) }
        let result = NotifierProcess.finish(again.0, again.1, again.2)
        #expect(all, "every due user mailed: \(result.stderr.suffix(2000)) \(pooler.log.suffix(1500))")
        #expect(stoppedInTime && result.status == 0, "\(result.stderr.suffix(1500))")
        #expect(try db.query("SELECT count(*) FILTER (WHERE email_sent) FROM notification_logs").first == ["40"])
    }

    @Test("runs killed at random points through the pooler: every due user ends with one sent row", arguments: PgBouncer.Mode.allCases)
    func randomKills(_ mode: PgBouncer.Mode) throws {
        let db = try TestDatabase()
        let pooler = try PgBouncer(mode: mode)
        try CrashAndRaceIntegrationTests.killAtRandom(db, kills: 8, users: 900, url: pooler.url(db.name), lease: 2)
    }

    @Test("PostgreSQL restarted in the middle of a run through the pooler: the run finishes, every alert sent exactly once",
          arguments: PgBouncer.Mode.allCases)
    func restartMidRun(_ mode: PgBouncer.Mode) throws {
        try DatabaseFaultIntegrationTests.restartMidRun(through: mode)
    }
}
