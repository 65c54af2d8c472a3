import Foundation
import Testing
@testable import Values
import Config

/// Several daemons on one database share an instant's sending: the one that holds the run lock
/// decides the run (the guards, the skips), opens its sending after its first pass, and a second
/// daemon joins it from the due set's other end; each alert goes out once. Real daemons, the real
/// SMTP test server, PostgreSQL.
@Suite("Several daemons share an instant's sending, on real servers", .enabled(if: TestEnvironment.enabled))
struct SharedSendingIntegrationTests {
    /// Users due at an instant an hour ago (both daemons run it at start), an invalid address among
    /// them, a leader started first and sending 20 mails a second; the second daemon started once
    /// the leader's run is under way.
    struct Scene {
        let db: TestDatabase
        let mail: Mailbox
        let users: Int
        let env: [String: String]
        let leader: (Process, Pipe, Pipe)
        let joiner: (Process, Pipe, Pipe)

        /// With `pooler`, both daemons connect through it.
        init(users: Int, pooler: PgBouncer? = nil) throws {
            db = try TestDatabase()
            mail = try Mailbox()
            self.users = users
            let fire = DaemonIntegrationTests.localTime(offset: -3600)
            try DaemonIntegrationTests.addDueUsers(db, mail, today: fire.date, count: users)
            _ = try db.addUser(name: "无效", email: "not an address", checkIns: [fire.date.adding(days: -3).description])
            // A lease short enough that a killed daemon's claims on its kept sessions are taken over in the test.
            env = try NotifierProcess.environment(database: db, [
                "NOTIFY_TIME": fire.time, "SMTP_CONNECTIONS": "2", "SMTP_RATE_LIMIT": "20", "CLAIM_LEASE_SECONDS": "4",
                "DATABASE_URL": pooler?.url(db.name) ?? db.url,
            ])
            leader = try NotifierProcess.start([], environment: env)
            let db = db
            #expect(try DaemonIntegrationTests.eventually(30) {
                try db.query("SELECT count(*) FROM sileme.notifier_runs WHERE sending_since IS NOT NULL").first == ["1"]
            }, "the leader opened its sending")
            joiner = try NotifierProcess.start([], environment: env)
        }

        /// SIGKILLs the daemons still running (a test's `defer`).
        func killLeft() {
            for daemon in [leader, joiner] where daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) }
        }

        /// Stops both daemons with SIGTERM (each given 30 s) and returns how they ended.
        func stop() -> [NotifierProcess.Result] {
            [leader, joiner].map { daemon in
                if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGTERM) }
                let deadline = Date().addingTimeInterval(30)
                while daemon.0.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
                return NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
            }
        }

        /// The alerts sent, per recipient.
        func sent() throws -> [String: [Mailbox.Delivery]] {
            Dictionary(grouping: try mail.deliveries(), by: \.recipient)
        }

        /// The runs: mode, status, sent, joined run (or empty), by id.
        func runs() throws -> [[String?]] {
            try db.query("SELECT id::text, mode, status, sent::text, coalesce(joined_run::text, '') FROM sileme.notifier_runs ORDER BY id")
        }
    }

    @Test("two daemons at one instant: the second joins the first's sending from the other end; each alert once, the skip recorded once by the run that decided it, two runs whose sends add up")
    func twoDaemonsShare() throws {
        let scene = try Scene(users: 300)
        defer { scene.killLeft() }
        #expect(try DaemonIntegrationTests.eventually(60) {
            try scene.db.query("""
                SELECT count(*) FILTER (WHERE mode = 'daemon-join' AND status = 'completed'),
                       count(*) FILTER (WHERE mode = 'daemon' AND status = 'completed') FROM sileme.notifier_runs
                """).first == ["1", "1"]
        }, "the run and the daemon that joined it finished")
        let results = scene.stop()
        #expect(results.allSatisfy { $0.status == 0 })
        let sent = try scene.sent()
        #expect(sent.count == scene.users && sent.values.allSatisfy { $0.count == 1 }, "each alert once: \(sent.count) recipients")

        // The first run decided; the join names it. The daemon that joined waited for the run to
        // finish before deciding again: no third run.
        let runs = try scene.runs()
        try #require(runs.count == 2, "\(runs)")
        let (lead, join) = (runs[0], runs[1])
        #expect(join[1] == "daemon-join" && join[2] == "completed", "\(runs)")
        #expect(lead[1] == "daemon" && lead[2] == "completed" && join[4] == lead[0], "\(runs)")
        let leadSent = Int(lead[3] ?? "") ?? 0, joinSent = Int(join[3] ?? "") ?? 0
        #expect(joinSent > 0 && leadSent > 0 && leadSent + joinSent == scene.users, "sent \(leadSent) + \(joinSent)")
        // Each run's alerts recorded under it; the one skip under a run that decides, never the join.
        #expect(try scene.db.query("SELECT run_id::text, count(*)::text FROM notification_logs WHERE status = 'sent' GROUP BY run_id ORDER BY run_id")
                == [[lead[0], "\(leadSent)"], [join[0], "\(joinSent)"]])
        let skips = try scene.db.query("SELECT run_id::text FROM notification_logs WHERE status = 'skipped'")
        #expect(skips.count == 1 && (skips.first?.first ?? nil) != join[0], "\(skips)")
        print("Shared sending: \(leadSent) sent by the run's holder, \(joinSent) by the daemon that joined it")
    }

    @Test("the daemon that joined is SIGKILLed mid-send: the holder and the retry finish; each alert once but the mails accepted and not recorded at the kill, resent with the same Message-ID; nothing lost")
    func joinerKilled() throws {
        let scene = try Scene(users: 300)
        defer { scene.killLeft() }
        #expect(try DaemonIntegrationTests.eventually(30) {
            let joined = try scene.db.query("""
                SELECT count(*) FROM notification_logs n JOIN sileme.notifier_runs r ON r.id = n.run_id
                WHERE r.mode = 'daemon-join' AND n.email_sent
                """)
            return (Int((joined.first?.first ?? nil) ?? "") ?? 0) >= 10
        }, "the joiner sends")
        kill(scene.joiner.0.processIdentifier, SIGKILL)
        let atKill = try scene.db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first?.first ?? nil
        #expect((Int(atKill ?? "") ?? 0) < scene.users, "killed mid-send: \(atKill ?? "?") of \(scene.users) sent")
        let done = try DaemonIntegrationTests.eventually(90) {
            try scene.db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first == ["\(scene.users)"]
        }
        Thread.sleep(forTimeInterval: 2)
        let result = scene.stop()[0]
        #expect(done, "every alert sent: \(result.stderr.suffix(2000))")
        #expect(result.status == 0)
        let sent = try scene.sent()
        #expect(sent.count == scene.users, "nothing lost")
        for (recipient, copies) in sent where copies.count > 1 {
            #expect(Set(copies.map(\.messageID)).count == 1, "\(recipient): resent with the same Message-ID")
        }
        let copies = sent.values.map { $0.count - 1 }.reduce(0, +)
        #expect(copies <= 4, "at most two accepted, unrecorded mails per SMTP connection of the killed daemon: \(copies)")
        #expect(try scene.db.query("SELECT count(*) FROM notification_logs WHERE status = 'sent'").first == ["\(scene.users)"])
    }

    /// Through PgBouncer: in transaction mode, and in session mode with a pool of 8 — less than the
    /// two daemons' 20 (`DatabaseSessions`: 10 each with `SMTP_CONNECTIONS=2`), so the daemon that
    /// joins gets what the holder left: its senders without a session drop out, or its join fails
    /// within the session wait. Either way the holder's run goes on and every alert goes once.
    @Test("two daemons sharing an instant through PgBouncer (transaction mode; session mode with a pool of 8 for their 20): every alert once, both stop on SIGTERM",
          arguments: [(PgBouncer.Mode.transaction, 40), (PgBouncer.Mode.session, 8)])
    func throughPooler(_ mode: PgBouncer.Mode, _ poolSize: Int) throws {
        #expect(DatabaseSessions(senders: 2, ackPage: false, separateListenURL: false).daemon == 10)
        let pooler = try PgBouncer(mode: mode, poolSize: poolSize)
        let scene = try Scene(users: 300, pooler: pooler)
        defer { scene.killLeft() }
        let all = try DaemonIntegrationTests.eventually(90) {
            try scene.db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first == ["\(scene.users)"]
        }
        let results = scene.stop()
        #expect(all, "every alert sent: \(results[0].stderr.suffix(1500)) --- \(results[1].stderr.suffix(1500)) \(pooler.log.suffix(1000))")
        #expect(results.allSatisfy { $0.status == 0 }, "both stopped cleanly: \(results.map(\.status))")
        let sent = try scene.sent()
        #expect(sent.count == scene.users && sent.values.allSatisfy { $0.count == 1 }, "each alert once: \(sent.count) recipients")
        let runs = try scene.runs()
        print("Shared sending through PgBouncer (\(mode), pool \(poolSize)): runs \(runs.map { "\($0[1] ?? "") \($0[2] ?? "") sent \($0[3] ?? "-")" })")
    }
}
