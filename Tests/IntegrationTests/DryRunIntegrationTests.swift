import Foundation
import Testing

/// docs/interfaces.md's dry run: the admin report, which writes nothing and sends nothing.
@Suite("Dry run on real servers", .enabled(if: TestEnvironment.enabled))
struct DryRunIntegrationTests {
    @Test("the JSON report matches docs/interfaces.md and the database is byte-for-byte unchanged")
    func jsonReport() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let due = try db.addUser(name: "张三", email: "zhang@example.com", checkIns: ["2026-01-10"])
        let notified = try db.addUser(name: "Notified", email: mail.address("n"), checkIns: ["2026-01-10"])
        try db.query("INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status) VALUES ($1, '2026-01-12', true, 1, 'sent')", [notified])
        let stale = try db.addUser(name: "Stale", email: mail.address("s"), checkIns: ["2025-11-01"])
        let badEmail = try db.addUser(name: "Bad", email: "bad@", checkIns: ["2026-01-10"])
        let badName = try db.addUser(name: "\u{202E}\u{200B}", email: mail.address("b"), checkIns: ["2026-01-10"])
        try db.addUser(name: "Fine", email: mail.address("f"), checkIns: ["2026-01-12"])
        // No fold first: the check-ins wait in the queue, and the dry run reads them there.
        let before = try db.dump()
        let result = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"],
                                             environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 0)
        #expect(try db.dump() == before)
        #expect(try mail.deliveries().isEmpty)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["run_date"] as? String == "2026-01-13")
        #expect(object["time_zone"] as? String == "Asia/Shanghai")
        #expect(object["threshold_days"] as? Int == 2)
        #expect(object["dry_run"] as? Bool == true)
        let users = try #require(object["users"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: users.map { ($0["user_id"] as! String, $0) })
        #expect(byID.count == 5)
        let first = try #require(byID[due])
        #expect(first["name"] as? String == "张三")
        #expect(first["email"] as? String == "z***@example.com")
        #expect(first["last_check_in_date"] as? String == "2026-01-10")
        #expect(first["consecutive_miss_days"] as? Int == 2)
        #expect(first["decision"] as? String == "send")
        #expect(byID[notified]?["decision"] as? String == "already_notified")
        #expect(byID[stale]?["decision"] as? String == "stale")
        #expect(byID[badEmail]?["decision"] as? String == "invalid_email")
        #expect(byID[badName]?["decision"] as? String == "invalid_name")
        #expect(object["summary"] as? [String: Int] == ["send": 1, "already_notified": 1, "stale": 1, "invalid_email": 1, "invalid_name": 1,
                                                          "superseded": 0, "paused": 0, "held": 0])
        #expect(!result.stdout.contains("zhang@example.com"))
        // Full emails only on request; table and CSV go to stdout too.
        let full = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "csv", "--full-emails"],
                                           environment: try NotifierProcess.environment(database: db))
        #expect(full.stdout.contains("zhang@example.com"))
        let table = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13"], environment: try NotifierProcess.environment(database: db))
        #expect(table.stdout.hasSuffix("Summary: send 1, already_notified 1, stale 1, invalid_email 1, invalid_name 1\n"))
        #expect(try db.dump() == before)
    }

    @Test("check-ins not yet folded: the dry run reads them beside the summary and the database is byte-for-byte unchanged")
    func readsQueuedCheckIns() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let back = try db.addUser(name: "Back", email: mail.address("back"), checkIns: ["2026-01-05"])
        let due = try db.addUser(name: "Due", email: mail.address("due"), checkIns: ["2026-01-10"])
        try db.foldCheckIns()
        try db.checkIn(back, "2026-01-12")
        #expect(try db.query("SELECT last_check_in_date::text FROM sileme.user_last_check_in WHERE user_id = $1", [back]).first?.first == "2026-01-05",
                "queued, not folded: the summary still says the 5th")
        let before = try db.dump()
        let result = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"],
                                             environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 0)
        #expect(try db.dump() == before)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let users = try #require(object["users"] as? [[String: Any]])
        #expect(users.compactMap { $0["user_id"] as? String } == [due], "the user who checked in on the 12th is fine")
        #expect(try db.query("SELECT count(*) FROM sileme.check_in_queue").first?.first == "1", "still queued: nobody folded")
        #expect(try db.query("SELECT (SELECT count(*) FROM notification_logs) + (SELECT count(*) FROM sileme.notifier_runs)").first?.first == "0")
        #expect(try mail.deliveries().isEmpty)
    }

    @Test("with the webhook on, one alert event per user to send to, in the users' order, after the owed messages")
    func webhookEvents() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUsers(count: 300, domain: mail.domain, lastCheckIn: "2026-01-10")
        // Nobody listens there: a dry run sends nothing.
        let env = try NotifierProcess.environment(database: db, [
            "WEBHOOK_URL": "http://127.0.0.1:9/hook", "WEBHOOK_SECRET": "whsec_" + Data(repeating: 7, count: 32).base64EncodedString(),
        ])
        let before = try db.dump()
        let result = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"], environment: env)
        #expect(result.status == 0, "\(result.stderr.suffix(800))")
        #expect(try db.dump() == before)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let users = try #require(object["users"] as? [[String: Any]])
        let sends = users.filter { $0["decision"] as? String == "send" }.compactMap { $0["user_id"] as? String }
        #expect(sends.count == 300)
        let messages = try #require(object["messages"] as? [[String: Any]])
        let events = messages.filter { $0["channel"] as? String == "webhook" && $0["kind"] as? String == "alert" }
        #expect(events.compactMap { $0["user_id"] as? String } == sends)
        #expect(events.allSatisfy { $0["email"] is NSNull })
        #expect((object["webhook_summary"] as? [String: Int])?["alert"] == 300)
        let table = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13"], environment: env)
        #expect(table.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("  webhook alert  ") }.count == 300)
    }

    @Test("the dry run needs no mail settings and reports the same decisions the real run acts on")
    func sameDecisions() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        for i in 1...5 { try db.addUser(name: "U\(i)", email: mail.address("u\(i)"), checkIns: ["2026-01-\(String(format: "%02d", 5 + i))"]) }
        let bare = try NotifierProcess.environment(database: db, ["FROM_EMAIL": nil, "SMTP_USER": nil, "SMTP_PASSWORD": nil])
        let report = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"], environment: bare)
        #expect(report.status == 0)
        let users = (try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])?["users"] as? [[String: Any]] ?? []
        let wouldSend = Set(users.filter { $0["decision"] as? String == "send" }.compactMap { $0["user_id"] as? String })
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(database: db)).status == 0)
        let sent = Set(try db.query("SELECT user_id::text FROM notification_logs WHERE email_sent").compactMap { $0[0] })
        #expect(wouldSend == sent)
        #expect(sent.count == 5)  // L from 01-06 to 01-10: m from 6 down to 2
    }
}
