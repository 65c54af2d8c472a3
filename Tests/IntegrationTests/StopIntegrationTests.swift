import Foundation
import Testing
@testable import Values
@testable import Store

/// SIGTERM in every kind of wait: the daemon between runs and while the database is unreachable
/// at start, a run in a mail server's retry backoff, waiting for a rate-limit slot, waiting for
/// another run's lock, a mail server that never answers, and a database reconnect. Each process
/// exits within two seconds of the signal (measured), finishes or leaves for a later run what it
/// had claimed, and a later run delivers every alert exactly once.
@Suite("Stop in every wait", .enabled(if: TestEnvironment.enabled))
struct StopIntegrationTests {
    static let date = "2026-01-13"
    static let runNow = ["--run-now", "--date", date]

    /// Sends SIGTERM to `process` and returns what it left and the seconds until it exited (at
    /// most `bound`: then it is killed and the test fails).
    static func terminate(_ process: Process, _ out: Pipe, _ err: Pipe, wait: String,
                          bound: TimeInterval = 20) -> (result: NotifierProcess.Result, seconds: TimeInterval) {
        let sent = Date()
        kill(process.processIdentifier, SIGTERM)
        while process.isRunning && Date().timeIntervalSince(sent) < bound { Thread.sleep(forTimeInterval: 0.01) }
        let seconds = Date().timeIntervalSince(sent)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let result = NotifierProcess.finish(process, out, err)
        print("stop measured: \(wait): exited \(String(format: "%.2f", seconds)) s after SIGTERM, status \(result.status)")
        #expect(seconds < 2, "\(wait): exited \(seconds) s after SIGTERM; \(result.stderr.suffix(1500))")
        return (result, seconds)
    }

    /// Each of `users` has exactly one row, sent, and the mailbox one message for each.
    static func deliveredOnce(_ db: TestDatabase, _ mail: Mailbox, _ users: [String]) throws {
        for user in users {
            let rows = try db.logs(user)
            #expect(rows.count == 1 && rows[0].emailSent, "user \(user): \(rows)")
        }
        let deliveries = try mail.deliveries()
        #expect(deliveries.count == users.count && Set(deliveries.map(\.recipient)).count == users.count)
    }

    @Test("the daemon waiting for its next run")
    func daemonIdle() throws {
        let db = try TestDatabase()
        let fire = DaemonIntegrationTests.localTime(offset: 3600)
        try DaemonIntegrationTests.completedRun(db, on: fire.date.adding(days: -1))
        try DaemonIntegrationTests.completedRun(db, on: fire.date)
        let notify = try NotifySocket()
        defer { notify.shutdown() }
        let env = try NotifierProcess.environment(database: db, ["NOTIFY_TIME": fire.time, "NOTIFY_SOCKET": notify.path])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(notify.waitFor(10) { $0.contains("READY=1") } != nil)
        Thread.sleep(forTimeInterval: 0.5)
        let stopped = Self.terminate(process, out, err, wait: "daemon between runs")
        #expect(stopped.result.status == 0)
        #expect(notify.waitFor(2) { $0.contains("STOPPING=1") } != nil)
    }

    @Test("the daemon retrying a database that is unreachable at start")
    func daemonStartupRetry() throws {
        let port = try PostgresCluster.freePort()
        let db = try TestDatabase()
        // Nothing listens on `port` once the silent server is gone: each connect is refused at once.
        let notify = try NotifySocket()
        defer { notify.shutdown() }
        let env = try NotifierProcess.environment(database: db, [
            "DATABASE_URL": "postgresql://postgres@127.0.0.1:\(port)/nothing", "NOTIFY_SOCKET": notify.path,
        ])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(notify.waitFor(10) { $0.contains("STATUS=waiting for the database") } != nil)
        // The waits are 1, 2, 4, 8 … s: at 3.5 s the daemon is inside the 4-second one.
        Thread.sleep(forTimeInterval: 3.5)
        #expect(process.isRunning)
        let stopped = Self.terminate(process, out, err, wait: "daemon start, database unreachable")
        #expect(stopped.result.status == 0)
    }

    @Test("a run in the mail server's retry backoff (SMTP_RETRY_BACKOFF_SECONDS=300)")
    func smtpBackoff() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let busy = try db.addUser(name: "Busy", email: mail.address("temp451once"), checkIns: ["2026-01-10"])
        let env = try NotifierProcess.environment(database: db, ["SMTP_RETRY_BACKOFF_SECONDS": "300", "SMTP_CONNECTIONS": "1"])
        let (process, out, err) = try NotifierProcess.start(Self.runNow, environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(20) { try mail.events().contains { $0.code == 451 } })
        Thread.sleep(forTimeInterval: 0.5)
        _ = Self.terminate(process, out, err, wait: "SMTP retry backoff")
        #expect(try db.logs(busy).map(\.status) == ["retry"], "the alert is kept for a later retry")
        #expect(try mail.deliveries().isEmpty)
        let retried = try NotifierProcess.run(["retry", "--date", Self.date], environment: env)
        #expect(retried.status == 0, "\(retried.stderr.suffix(800))")
        try Self.deliveredOnce(db, mail, [busy])
    }

    @Test("a run waiting for a rate-limit slot (SMTP_RATE_LIMIT=0.02: one mail per 50 s)")
    func rateLimiter() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (1...3).map { try db.addUser(name: "Rate \($0)", email: mail.address("rate\($0)"), checkIns: ["2026-01-10"]) }
        let env = try NotifierProcess.environment(database: db, ["SMTP_RATE_LIMIT": "0.02", "SMTP_CONNECTIONS": "1"])
        let (process, out, err) = try NotifierProcess.start(Self.runNow, environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(20) { try mail.deliveries().count == 1 })
        Thread.sleep(forTimeInterval: 0.5)
        _ = Self.terminate(process, out, err, wait: "rate limiter")
        #expect(try mail.deliveries().count == 1, "nothing more after the stop")
        let statuses = try users.flatMap { try db.logs($0).compactMap(\.status) }
        #expect(statuses.sorted() == ["retry", "retry", "sent"], "the other two are kept: \(statuses)")
        var unlimited = env
        unlimited["SMTP_RATE_LIMIT"] = nil
        let rest = try NotifierProcess.run(["retry", "--date", Self.date], environment: unlimited)
        #expect(rest.status == 0, "\(rest.stderr.suffix(800))")
        try Self.deliveredOnce(db, mail, users)
    }

    @Test("--run-now and retry waiting for another run's lock")
    func runLock() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "Locked", email: mail.address("locked"), checkIns: ["2026-01-10"])
        let holder = try #require(try RunLock.take(Secret(db.url), schema: .standard, leaseSeconds: 120))
        let env = try NotifierProcess.environment(database: db)
        for arguments in [Self.runNow, ["retry", "--date", Self.date, "--user", user]] {
            if arguments[0] == "retry" {
                // Something for `retry` to do: the user's mail of the day failed earlier.
                try db.query("""
                    INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status, attempts,
                                                   last_error, contact)
                    VALUES ($1::uuid, $2::date, false, 2, 'failed', 1, '550 test', $3)
                    """, [user, Self.date, mail.address("locked").lowercased()])
            }
            let (process, out, err) = try NotifierProcess.start(arguments, environment: env)
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            Thread.sleep(forTimeInterval: 1.5)
            #expect(process.isRunning, "\(arguments[0]) waits for the lock")
            let stopped = Self.terminate(process, out, err, wait: "run lock (\(arguments[0]))")
            if arguments == Self.runNow {
                #expect(stopped.result.status == 75)
                #expect(stopped.result.stderr.contains("stopped while waiting for another run"), "\(stopped.result.stderr.suffix(800))")
            }
        }
        #expect(try mail.deliveries().isEmpty)
        #expect(try db.query("SELECT count(*) FROM sileme.notifier_runs").first?.first == "0", "no run began")
        holder.release()
        #expect(try NotifierProcess.run(["retry", "--date", Self.date], environment: env).status == 0)
        try Self.deliveredOnce(db, mail, [user])
    }

    @Test("a mail server that accepted the connection and never answers (SMTP_TIMEOUT_SECONDS=60)")
    func hungServer() throws {
        let silent = try SilentServer()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (1...2).map { try db.addUser(name: "Hung \($0)", email: mail.address("hung\($0)"), checkIns: ["2026-01-10"]) }
        let env = try NotifierProcess.environment(database: db, [
            "SMTP_PORT": String(silent.port), "SMTP_TIMEOUT_SECONDS": "60", "SMTP_CONNECTIONS": "2",
        ])
        let (process, out, err) = try NotifierProcess.start(Self.runNow, environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(20) {
            try db.query("SELECT count(*) FROM notification_logs WHERE status = 'sending'").first?.first == "2"
        }, "both claimed and in flight")
        Thread.sleep(forTimeInterval: 1)
        _ = Self.terminate(process, out, err, wait: "mail server never answering")
        for user in users { #expect(try db.logs(user).map(\.status) == ["retry"], "kept for a later retry") }
        withExtendedLifetime(silent) {}
        let good = try NotifierProcess.environment(database: db)
        #expect(try NotifierProcess.run(["retry", "--date", Self.date], environment: good).status == 0)
        try Self.deliveredOnce(db, mail, users)
    }

    @Test("a run reconnecting to a database that went away (DATABASE_RECONNECT_SECONDS=3600)")
    func reconnect() throws {
        let cluster = try PostgresCluster()
        let db = try TestDatabase(cluster: cluster)
        let mail = try Mailbox()
        // 100 users at 10 mails/s: ten seconds of sending for the database to go away in, on a loaded machine too.
        let users = 100
        try db.addUsers(count: users, domain: mail.domain, lastCheckIn: "2026-01-10")
        let env = try NotifierProcess.environment(database: db, [
            "SMTP_CONNECTIONS": "1", "SMTP_RATE_LIMIT": "10", "DATABASE_RECONNECT_SECONDS": "3600",
        ])
        let (process, out, err) = try NotifierProcess.start(Self.runNow, environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(30) { try mail.deliveries().count >= 3 })
        try cluster.stop()
        Thread.sleep(forTimeInterval: 2)
        #expect(process.isRunning, "the run waits for the database")
        let stopped = Self.terminate(process, out, err, wait: "database reconnect")
        #expect(stopped.result.stderr.contains("database connection lost during the run"), "\(stopped.result.stderr.suffix(1500))")
        try cluster.start()
        let rerun = try NotifierProcess.run(Self.runNow, environment: env)
        #expect(rerun.status == 0, "\(rerun.stderr.suffix(1500))")
        let deliveries = try mail.deliveries()
        #expect(Set(deliveries.map(\.recipient)).count == users, "no alert lost")
        // Mails accepted while the database was going away could not be recorded: those (the
        // recorder's last batch, at most a few at 10 mails/s) are sent again, with the same Message-ID.
        let copies = Dictionary(grouping: deliveries, by: \.recipient).values.filter { $0.count > 1 }
        #expect(deliveries.count - users <= 3, "\(deliveries.count - users) sent twice")
        for pair in copies { #expect(pair.count == 2 && pair[0].messageID != nil && pair[0].messageID == pair[1].messageID) }
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first?.first == "\(users)")
    }
}
