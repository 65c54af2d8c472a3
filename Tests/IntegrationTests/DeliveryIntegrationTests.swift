import Foundation
import Logging
import Testing
@testable import Values
@testable import Config
@testable import Delivery

/// docs/delivery.md end to end: claim, send, record, retries, failures, races and crashes.
@Suite("Delivery on real servers", .enabled(if: TestEnvironment.enabled))
struct DeliveryIntegrationTests {
    @Test("a 451 on the first attempt is retried within the run and delivered")
    func transientRetried() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "Temp", email: mail.address("temp451once"), checkIns: ["2026-01-10"])
        let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 0)
        #expect(try mail.deliveries().count == 1)
        #expect(try mail.events().filter { $0.code == 451 }.count == 1)
        let row = try #require(try db.logs(user).first)
        #expect(row.emailSent && row.status == "sent" && row.attempts == 2)
    }

    @Test("a 550 is recorded with the server's reply, the run exits 75, and the user is due again next run")
    func permanentRecorded() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "Perm", email: mail.address("perm550"), checkIns: ["2026-01-10"])
        let other = try db.addUser(name: "Other", email: mail.address("other"), checkIns: ["2026-01-10"])
        let env = try NotifierProcess.environment(database: db)
        let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(result.status == 75)
        let row = try #require(try db.logs(user).first)
        #expect(row.status == "failed" && !row.emailSent && row.attempts == 1)
        #expect(row.lastError?.hasPrefix("550 5.1.1") == true)
        #expect(try db.logs(other).first?.emailSent == true)
        // 554 after DATA is permanent too.
        let data = try db.addUser(name: "Data", email: mail.address("data554"), checkIns: ["2026-01-10"])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 75)
        #expect(try db.logs(data).first?.lastError?.hasPrefix("554") == true)
        // Next day, still in the streak: due again (次日重试).
        let report = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-14", "--format", "json"], environment: env)
        let json = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        let users = json?["users"] as? [[String: Any]] ?? []
        #expect(users.first { $0["user_id"] as? String == user }?["decision"] as? String == "send")
        #expect(users.first { $0["user_id"] as? String == other }?["decision"] as? String == "already_notified")
    }

    @Test("two --run-now processes started together on 200 due users send 200 mails, not 400")
    func concurrentRuns() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUsers(count: 200, domain: mail.domain, lastCheckIn: "2026-01-10")
        let env = try NotifierProcess.environment(database: db, ["SMTP_CONNECTIONS": "4"])
        let first = try NotifierProcess.start(["--run-now", "--date", "2026-01-13"], environment: env)
        let second = try NotifierProcess.start(["--run-now", "--date", "2026-01-13"], environment: env)
        let results = [NotifierProcess.finish(first.0, first.1, first.2), NotifierProcess.finish(second.0, second.1, second.2)]
        #expect(results.map(\.status) == [0, 0])
        let deliveries = try mail.deliveries()
        #expect(deliveries.count == 200)
        #expect(Set(deliveries.map(\.recipient)).count == 200)
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first?.first == "200")
        let sentByRun = try db.query("SELECT sent FROM sileme.notifier_runs ORDER BY id").compactMap { $0[0].flatMap(Int.init) }
        #expect(sentByRun.reduce(0, +) == 200)
    }

    @Test("two runs in one process racing on the same due users: every claim is won once")
    func claimRace() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUsers(count: 120, domain: mail.domain, lastCheckIn: "2026-01-10")
        let configuration = try NotifierConfiguration.sendingToTestServer(database: db, connections: 3)
        let runDate = try #require(CalendarDate(parsing: "2026-01-13"))
        let results = Locked<[RunResult]>([])
        let fixed = configuration
        WorkerPool.run(count: 2, name: "race") { _ in
            let run = NotificationRun(configuration: fixed, runDate: runDate, mode: .runNow, logger: Logger(label: "race") { _ in SwiftLogNoOpLogHandler() })
            if let result = try? run.execute() { results.withLock { $0.append(result) } }
        }
        let all = results.withLock { $0 }
        #expect(all.count == 2)
        #expect(all.map(\.counts.sent).reduce(0, +) == 120)
        // Each user was sent by one run; the other found it claimed or, if it looked later, notified.
        #expect(all.map { $0.counts.busyElsewhere + $0.counts.alreadyNotified }.reduce(0, +) == 120)
        #expect(try mail.deliveries().count == 120)
    }

    @Test("a run killed with SIGKILL mid-dispatch loses no alert: the next run resends with the same Message-ID")
    func killedRun() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (1...4).map { try db.addUser(name: "Slow \($0)", email: mail.address("slow1-\($0)"), checkIns: ["2026-01-10"]) }
        let env = try NotifierProcess.environment(database: db, ["SMTP_CONNECTIONS": "1"])
        let (process, out, err) = try NotifierProcess.start(["--run-now", "--date", "2026-01-13"], environment: env)
        // Wait until the first mail was accepted and the second is in flight, then kill.
        let deadline = Date().addingTimeInterval(20)
        while try mail.deliveries().count < 1, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 0.4)
        kill(process.processIdentifier, SIGKILL)
        let killed = NotifierProcess.finish(process, out, err)
        #expect(killed.status == SIGKILL)
        // Let the server finish the DATA that was in flight, then look at what the kill left.
        Thread.sleep(forTimeInterval: 1.5)
        let claimed = try db.query("SELECT user_id::text, message_id FROM notification_logs WHERE status = 'sending'")
        #expect(!claimed.isEmpty, "claimed rows left behind by the killed run")
        let claimedIDs = Set(claimed.compactMap { $0[1].map { "<\($0)>" } })
        let inFlight = try mail.deliveries().filter { claimedIDs.contains($0.messageID ?? "") }
        #expect(inFlight.count <= 1, "at most the one message in flight was accepted but not recorded")
        // The backend of the killed process went away with its socket; the next run takes over.
        let rerun = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(rerun.status == 0)
        for user in users {
            let rows = try db.logs(user)
            #expect(rows.count == 1 && rows[0].emailSent, "user \(user) notified exactly once in the log")
        }
        let deliveries = try mail.deliveries()
        #expect(Set(deliveries.map(\.recipient)).count == 4, "every alert delivered")
        #expect(deliveries.count == 4 + inFlight.count, "duplicates only for the message in flight at the kill")
        for row in claimed {
            // A taken-over claim keeps its Message-ID.
            #expect(try db.query("SELECT message_id FROM notification_logs WHERE user_id = $1", [row[0]]).first?.first == row[1])
        }
        for duplicate in inFlight {
            #expect(deliveries.filter { $0.messageID == duplicate.messageID }.count == 2, "resent with the same Message-ID")
        }
    }

    @Test("implicit TLS works; STARTTLS required against a server without it sends nothing in clear")
    func tlsModes() throws {
        let env = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "TLS", email: mail.address("tls"), checkIns: ["2026-01-10"])
        // STARTTLS required, but the plain server does not offer it: refused, nothing delivered.
        let refused = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(
            database: db, ["SMTP_PORT": env.plainPort, "SMTP_RETRY_ATTEMPTS": "1"]))
        #expect(refused.status == 69)
        #expect(try mail.deliveries().isEmpty)
        #expect(try db.logs(user).first?.status == "retry")
        // Implicit TLS (smtps): delivered.
        try db.query("UPDATE notification_logs SET next_attempt_at = now() - interval '1 second'")
        let tls = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(
            database: db, ["SMTP_PORT": env.tlsPort, "SMTP_TLS": "tls"]))
        #expect(tls.status == 0)
        #expect(try mail.deliveries().count == 1)
        #expect(try db.logs(user).first?.attempts == 2)
    }

    @Test("an unreachable mail server exits 69 and keeps every alert for a retry")
    func serverDown() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (1...5).map { try db.addUser(name: "U\($0)", email: mail.address("u\($0)"), checkIns: ["2026-01-10"]) }
        let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(
            database: db, ["SMTP_PORT": "1", "SMTP_RETRY_ATTEMPTS": "2", "SMTP_CONNECTIONS": "1"]))
        #expect(result.status == 69)
        for user in users { #expect(try db.logs(user).first?.status == "retry") }
        // After the give-up limit the rest are recorded without more attempts.
        #expect(result.stderr.contains("not attempted"))
    }
}
