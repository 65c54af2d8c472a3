import Foundation
import Testing

/// Issue 4's admin tools on real servers: `--preview` and `retry`.
@Suite("Admin tools on real servers", .enabled(if: TestEnvironment.enabled))
struct AdminIntegrationTests {
    @Test("--preview prints the exact message the contact would receive, and the rule's verdict")
    func preview() throws {
        let db = try TestDatabase()
        let due = try db.addUser(name: "王小明 🌼", email: "wang.family@example.com", checkIns: ["2026-01-10"])
        let notDue = try db.addUser(name: "Fine", email: "fine@example.com", checkIns: ["2026-01-12"])
        let env = try NotifierProcess.environment(database: db)
        let before = try db.dump()
        let result = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--preview", due], environment: env)
        #expect(result.status == 0)
        #expect(result.stderr.contains("preview for \(due) on 2026-01-13: send (m = 2, last check-in 2026-01-10)"))
        let parsed = try MailParser.parse(Data(result.stdout.utf8))
        #expect(parsed.defects.isEmpty)
        #expect(parsed.headers["Subject"] == ["[一键打卡] 关于 王小明 🌼 的签到提醒"])
        #expect(parsed.headers["To"] == ["wang.family@example.com"])
        #expect(parsed.text?.contains("王小明 🌼 已连续 2 天未在\"一键打卡\"应用中签到。") == true)
        let other = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--preview", notDue], environment: env)
        #expect(other.status == 0 && other.stderr.contains("not due (m = 0 < 2"))
        let unknown = try NotifierProcess.run(["--run-now", "--dry-run", "--preview", UUID().uuidString], environment: env)
        #expect(unknown.status == 64 && unknown.stderr.contains("no user with id"))
        #expect(try db.dump() == before, "a preview writes nothing")
    }

    @Test("retry re-attempts failed and stuck mails now, through the claim path, once")
    func retry() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // First a 451 that the run does not retry (one attempt), and a 550 from a wrong address.
        let transient = try db.addUser(name: "Transient", email: mail.address("temp451once"), checkIns: ["2026-01-10"])
        let permanent = try db.addUser(name: "Permanent", email: mail.address("perm550"), checkIns: ["2026-01-10"])
        let fine = try db.addUser(name: "Fine", email: mail.address("fine"), checkIns: ["2026-01-10"])
        let env = try NotifierProcess.environment(database: db, ["SMTP_RETRY_ATTEMPTS": "1"])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 75)
        #expect(try db.logs(transient).first?.status == "retry")
        #expect(try db.logs(permanent).first?.status == "failed")
        // The contact's address is corrected; a claim of a crashed run is left behind for another user.
        try db.query("UPDATE users SET emergency_email = $2 WHERE id = $1", [permanent, mail.address("corrected")])
        let stuck = try db.addUser(name: "Stuck", email: mail.address("stuck"), checkIns: ["2026-01-10"])
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, consecutive_miss_days, status, message_id, claim_backend_pid,
                                           claimed_at, contact)
            VALUES ($1, '2026-01-13', 2, 'sending', 'sileme.stuck.1@sileme.app', 999999, now(), $2)
            """, [stuck, mail.address("stuck").lowercased()])
        try db.foldCheckIns()  // the daemon's every second: nothing left for the reader to fold
        let before = try db.dump()
        let plan = try NotifierProcess.run(["retry", "--date", "2026-01-13", "--dry-run", "--json"], environment: env)
        #expect(plan.status == 0)
        #expect(try db.dump() == before, "--dry-run writes nothing")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["retry"] as? [[String: Any]])
        #expect(Set(rows.compactMap { $0["user_id"] as? String }) == [transient, permanent, stuck])
        #expect(object["will_send"] as? Int == 3)
        #expect(try mail.deliveries().map(\.recipient) == [mail.address("fine")])
        let table = try NotifierProcess.run(["retry", "--date", "2026-01-13", "--dry-run"], environment: env)
        #expect(table.stdout.contains("3 of 3 failed or stuck would be sent again"))

        let result = try NotifierProcess.run(["retry", "--date", "2026-01-13"], environment: env)
        #expect(result.status == 0)
        #expect(Set(try mail.deliveries().map(\.recipient)) == Set([mail.address("fine"), mail.address("temp451once"),
                                                                    mail.address("corrected"), mail.address("stuck")]))
        for user in [transient, stuck, fine] { #expect(try db.logs(user).map(\.emailSent) == [true]) }
        // The refused address keeps its failed row; the corrected one is a contact of its own, mailed once.
        #expect(try db.logs(permanent).map(\.emailSent).sorted { !$0 && $1 } == [false, true])
        #expect(try mail.deliveries().first { $0.recipient == mail.address("stuck") }?.messageID == "<sileme.stuck.1@sileme.app>")
        #expect(try db.query("SELECT mode, status FROM sileme.notifier_runs ORDER BY id").map { $0.compactMap { $0 } } == [["run-now", "completed"], ["retry", "completed"]])
        // Nothing left: a second retry sends nothing.
        let again = try NotifierProcess.run(["retry", "--date", "2026-01-13"], environment: env)
        #expect(again.status == 0 && again.stderr.contains("nothing to retry"), "\(again.stderr.suffix(800))")
        #expect(try mail.deliveries().count == 4)
    }

    @Test("retry never mails a user who checked in since the failure")
    func retryAfterCheckIn() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "Back", email: mail.address("perm550"), checkIns: ["2026-01-10"])
        let env = try NotifierProcess.environment(database: db)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 75)
        try db.query("UPDATE users SET emergency_email = $2 WHERE id = $1", [user, mail.address("ok")])
        try db.checkIn(user, "2026-01-13")
        let result = try NotifierProcess.run(["retry", "--date", "2026-01-13", "--user", user], environment: env)
        #expect(result.status == 0 && result.stderr.contains("none still due"))
        #expect(try mail.deliveries().isEmpty)
    }
}
