import Foundation
import Testing

/// docs/rule.md end to end: the real executable, a real PostgreSQL, a real SMTP server.
@Suite("The rule on real servers", .enabled(if: TestEnvironment.enabled))
struct RuleIntegrationTests {
    @Test("the design doc's table: mails on 01-13 with m = 2, nothing on 01-11, 01-12 or 01-14")
    func designTable() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "张三", email: mail.address("zhang"), checkIns: ["2026-01-09", "2026-01-10"])
        let env = try NotifierProcess.environment(database: db)
        for day in ["2026-01-11", "2026-01-12"] {
            #expect(try NotifierProcess.run(["--run-now", "--date", day], environment: env).status == 0)
            #expect(try mail.deliveries().isEmpty, "no mail on \(day)")
        }
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        let sent = try mail.deliveries()
        #expect(sent.count == 1)
        let parsed = try MailParser.parse(try #require(sent.first).raw)
        #expect(parsed.text?.contains("张三 已连续 2 天未在\"一键打卡\"应用中签到。") == true)
        #expect(try db.logs(user).map(\.status) == ["sent"])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: env).status == 0)
        #expect(try mail.deliveries().count == 1, "once per streak: no second mail on 01-14")
        // A new check-in starts a new streak: the next run sends the old streak's all-clear, and
        // two more missed days mail again.
        try db.checkIn(user, "2026-01-15")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-18"], environment: env).status == 0)
        let alertID = try #require(sent.first?.messageID)
        let after = try mail.deliveries().map { try MailParser.parse($0.raw) }
        #expect(after.count == 3)
        #expect(after.filter { $0.headers["In-Reply-To"] == [alertID] && $0.headers["References"] == [alertID] }.count == 1,
                "one all-clear, threaded under the alert")
    }

    @Test("a day the daemon missed does not lose the alert: 01-14 mails with m = 3 when 01-13 sent nothing")
    func catchUp() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "李四", email: mail.address("li"), checkIns: ["2026-01-10"])
        let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 0)
        let parsed = try MailParser.parse(try #require(try mail.deliveries().first).raw)
        #expect(parsed.text?.contains("李四 已连续 3 天未") == true)
        #expect(try db.logs(user).first?.missedDays == 3)
    }

    @Test("check-in today (or later) cancels; never checked in gets nothing; stale is never mailed")
    func noMailCases() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUser(name: "Today", email: mail.address("today"), checkIns: ["2026-01-10", "2026-01-13"])
        // D + 1 (a phone a zone ahead) cancels too; a date after D + 1 no longer does (docs/guards.md).
        try db.addUser(name: "Future", email: mail.address("future"), checkIns: ["2026-01-10", "2026-01-14"])
        try db.addUser(name: "Never", email: mail.address("never"))
        let stale = try db.addUser(name: "Stale", email: mail.address("stale"), checkIns: ["2025-12-01"])
        let lastDue = try db.addUser(name: "LastDue", email: mail.address("lastdue"), checkIns: ["2026-01-03"])  // m = 9
        let env = try NotifierProcess.environment(database: db)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try mail.deliveries().map(\.recipient) == [mail.address("lastdue")])
        #expect(try db.logs(stale).isEmpty)
        #expect(try db.logs(lastDue).first?.missedDays == 9)
    }

    @Test("bad rows are skipped with a recorded reason and everyone else is served")
    func badRows() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let badEmail = try db.addUser(name: "Bad", email: "no-at-sign", checkIns: ["2026-01-10"])
        let injected = try db.addUser(name: "Inject", email: "x@\(mail.domain)\r\nBcc: victim@example.com", checkIns: ["2026-01-10"])
        let blankName = try db.addUser(name: " \t\r\n ", email: mail.address("blank"), checkIns: ["2026-01-10"])
        let good = try db.addUser(name: "Good", email: mail.address("good"), checkIns: ["2026-01-10"])
        let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 0)
        #expect(try mail.deliveries().map(\.recipient) == [mail.address("good")])
        #expect(try db.logs(good).first?.emailSent == true)
        for user in [badEmail, injected] {
            let row = try #require(try db.logs(user).first)
            #expect(row.status == "skipped")
            #expect(row.lastError?.hasPrefix("emergency email:") == true)
        }
        #expect(try db.logs(blankName).first?.lastError == "name is empty after cleaning")
        #expect(result.stderr.contains("notification skipped"))
        #expect(!result.stderr.contains("no-at-sign"), "contact emails are never logged in full")
    }
}
