import Foundation
import Testing

/// docs/guards.md end to end: future-dated check-ins, superseded accounts, pauses and check-ins
/// during the run — the real executable, a real PostgreSQL, a real SMTP server.
@Suite("The guards on real servers", .enabled(if: TestEnvironment.enabled))
struct GuardsIntegrationTests {
    static func run(_ db: TestDatabase, _ day: String, _ overrides: [String: String?] = [:]) throws -> NotifierProcess.Result {
        try NotifierProcess.run(["--run-now", "--date", day], environment: try NotifierProcess.environment(database: db, overrides))
    }

    static func dryRun(_ db: TestDatabase, _ day: String, _ format: String,
                       _ overrides: [String: String?] = [:]) throws -> NotifierProcess.Result {
        try NotifierProcess.run(["--run-now", "--dry-run", "--date", day, "--format", format],
                                environment: try NotifierProcess.environment(database: db, overrides))
    }

    /// The dry run's JSON: the users by id, the summary and the whole object.
    static func json(_ db: TestDatabase, _ day: String, _ overrides: [String: String?] = [:])
        throws -> (users: [String: [String: Any]], summary: [String: Int], object: [String: Any]) {
        let result = try dryRun(db, day, "json", overrides)
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let users = (object["users"] as? [[String: Any]] ?? []).map { ($0["user_id"] as! String, $0) }
        return (Dictionary(uniqueKeysWithValues: users), object["summary"] as? [String: Int] ?? [:], object)
    }

    // MARK: Future-dated check-ins

    @Test("a check-in dated 2099 does not silence: mailed on 01-13 with m = 2, the dry run names the date, the run counts it once")
    func futureRowDoesNotSilence() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "张三", email: mail.address("zhang"), checkIns: ["2026-01-09", "2026-01-10", "2099-01-01"])
        #expect(try Self.run(db, "2026-01-12").status == 0)
        #expect(try mail.deliveries().isEmpty, "m = 1 on 01-12: not yet due")

        let report = try Self.json(db, "2026-01-13")
        let row = try #require(report.users[user])
        #expect(row["decision"] as? String == "send")
        #expect(row["last_check_in_date"] as? String == "2026-01-10")
        #expect(row["consecutive_miss_days"] as? Int == 2)
        #expect(row["ignored_future_check_in"] as? String == "2099-01-01")
        #expect(report.object["future_check_ins_ignored"] as? Int == 1)

        let result = try Self.run(db, "2026-01-13")
        #expect(result.status == 0)
        let sent = try mail.deliveries()
        #expect(sent.count == 1)
        let parsed = try MailParser.parse(try #require(sent.first).raw)
        #expect(parsed.text?.contains("张三 已连续 2 天未在\"一键打卡\"应用中签到。") == true)
        #expect(try db.logs(user).map(\.missedDays) == [2])
        let futureLines = result.stderr.split(separator: "\n").filter { $0.contains("check-ins dated after 2026-01-14") }
        #expect(futureLines.count == 1, "said once per run")
        #expect(futureLines.first?.contains("1 user(s)") == true)
        #expect(result.stderr.contains("1 with future-dated check-ins ignored"))
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: result, minimum: 4)
            let future = entries.filter { $0["NOTIFIER_EVENT"] == "future_check_ins_ignored" }
            #expect(future.count == 1)
            #expect(future.first?["FUTURE_IGNORED"] == "1")
            #expect(entries.first { $0["NOTIFIER_EVENT"] == "run_finished" }?["FUTURE_IGNORED"] == "1")
        }
        #expect(try db.query("SELECT future_ignored FROM sileme.notifier_runs WHERE run_date = '2026-01-13'") == [["1"]])
    }

    @Test("a check-in dated D + 1 cancels, one dated D + 2 does not; a user with only future rows never checked in")
    func dayAfterCancels() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let ahead = try db.addUser(name: "Ahead", email: mail.address("ahead"), checkIns: ["2026-01-10", "2026-01-14"])
        let later = try db.addUser(name: "Later", email: mail.address("later"), checkIns: ["2026-01-10", "2026-01-15"])
        let onlyFuture = try db.addUser(name: "OnlyFuture", email: mail.address("only"), checkIns: ["2099-01-01"])
        #expect(try Self.json(db, "2026-01-13").users.keys.sorted() == [later])
        #expect(try Self.run(db, "2026-01-13").status == 0)
        #expect(try mail.deliveries().map(\.recipient) == [mail.address("later")])
        #expect(try db.logs(ahead).isEmpty)
        #expect(try db.logs(onlyFuture).isEmpty)
    }

    // MARK: Superseded accounts

    @Test("superseded: the old account of the same contact and name is not mailed (skipped row, event, newer account named); another name is")
    func superseded() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let contact = mail.address("family")
        let old = try db.addUser(name: "李四", email: contact, checkIns: ["2026-01-08"])
        // The reinstall: the same contact written differently, the name with extra white space.
        let new = try db.addUser(name: "  李四 ", email: "  " + contact.uppercased() + " ", checkIns: ["2026-01-09", "2026-01-12"])
        let sibling = try db.addUser(name: "李五", email: contact, checkIns: ["2026-01-08"])

        let report = try Self.json(db, "2026-01-13")
        let row = try #require(report.users[old])
        #expect(row["decision"] as? String == "superseded")
        #expect(row["superseded_by"] as? String == new)
        #expect((row["reason"] as? String)?.contains(new) == true)
        #expect(report.users[sibling]?["decision"] as? String == "send")
        #expect(report.summary["superseded"] == 1)

        let result = try Self.run(db, "2026-01-13")
        #expect(result.status == 0)
        #expect(try mail.deliveries().count == 1, "the other name is mailed, the old account is not")
        #expect(try db.logs(sibling).map(\.status) == ["sent"])
        let skipped = try #require(try db.logs(old).first)
        #expect(skipped.status == "skipped")
        #expect(skipped.lastError?.hasPrefix("superseded: newer account \(new)") == true)
        #expect(result.stderr.contains("notification skipped for user \(old): superseded"))
        #expect(result.stderr.contains("1 superseded"))
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: result, minimum: 4)
            let skip = try #require(entries.first { $0["NOTIFIER_EVENT"] == "notification_skipped" })
            #expect(skip["USER_ID"] == old)
            #expect(skip["SKIP_REASON"] == "superseded")
            #expect(skip["NEWER_USER_ID"] == new)
        }
        #expect(try db.query("SELECT superseded FROM sileme.notifier_runs WHERE run_date = '2026-01-13'") == [["1"]])

        // SUPERSEDE=off: the old account is an alert like any other.
        let off = try Self.json(db, "2026-01-14", ["SUPERSEDE": "off"])
        #expect(off.users[old]?["decision"] as? String == "send")
    }

    @Test("both accounts silent: exactly one alert in all, whether they stopped on different days or the same day")
    func bothSilentAlertOnce() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let contact = mail.address("parents")
        try db.addUser(name: "王五", email: contact, checkIns: ["2026-01-05"])
        try db.addUser(name: "王五", email: contact, checkIns: ["2026-01-06", "2026-01-10"])
        let tie = mail.address("tie")
        try db.addUser(name: "赵六", email: tie, checkIns: ["2026-01-10"])
        try db.addUser(name: "赵六", email: tie, checkIns: ["2026-01-10"])
        for day in 6...20 {
            #expect(try Self.run(db, String(format: "2026-01-%02d", day)).status == 0)
        }
        let sent = try mail.deliveries().map(\.recipient)
        #expect(sent.filter { $0 == contact }.count == 1)
        #expect(sent.filter { $0 == tie }.count == 1)
    }

    // MARK: Pause

    @Test("pause: before L changes nothing; during it no mail (paused); after it the mail counts from the pause's end and says so")
    func pause() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let before = try db.addUser(name: "Before", email: mail.address("before"), checkIns: ["2026-01-10"])
        let away = try db.addUser(name: "孙七", email: mail.address("away"), checkIns: ["2026-01-10"])
        let longAway = try db.addUser(name: "周八", email: mail.address("long"), checkIns: ["2025-11-01"])
        try db.query("UPDATE users SET paused_until = '2026-01-05' WHERE id = $1", [before])
        try db.query("UPDATE users SET paused_until = '2026-01-20' WHERE id = ANY($1::uuid[])", ["{\(away),\(longAway)}"])

        // During: the dry run says paused (and until when); nothing is sent or recorded.
        let during = try Self.json(db, "2026-01-13")
        #expect(during.users[away]?["decision"] as? String == "paused")
        #expect(during.users[away]?["paused_until"] as? String == "2026-01-20")
        #expect(during.users[away]?["consecutive_miss_days"] as? Int == 2)
        #expect(during.users[longAway]?["decision"] as? String == "paused")
        #expect(during.users[before]?["decision"] as? String == "send")
        #expect(during.summary["paused"] == 2)
        let run = try Self.run(db, "2026-01-13")
        #expect(run.status == 0)
        #expect(try mail.deliveries().map(\.recipient) == [mail.address("before")])
        let plain = try MailParser.parse(try #require(try mail.deliveries().first).raw)
        #expect(plain.text?.contains("Before 已连续 2 天未在") == true)
        #expect(plain.text?.contains("暂停") == false)
        #expect(try db.logs(away).isEmpty)
        #expect(run.stderr.contains("2 paused"))

        // After: one day after the end (m = 1) nothing; two days (m = 2) the mail, from the end of
        // the pause — also for the user whose last check-in is months old.
        #expect(try Self.run(db, "2026-01-22").status == 0)
        #expect(try mail.deliveries().count == 1)
        #expect(try Self.json(db, "2026-01-23").users[longAway]?["decision"] as? String == "send")
        #expect(try Self.run(db, "2026-01-23").status == 0)
        let after = try mail.deliveries().dropFirst()
        #expect(Set(after.map(\.recipient)) == [mail.address("away"), mail.address("long")])
        for delivery in after {
            let parsed = try MailParser.parse(delivery.raw)
            #expect(parsed.defects.isEmpty)
            let name = delivery.recipient == mail.address("away") ? "孙七" : "周八"
            #expect(parsed.text?.contains("\(name) 曾设置外出暂停至 2026-01-20，暂停结束后已连续 2 天未在\"一键打卡\"应用中签到。") == true)
        }
        #expect(try db.logs(away).map(\.missedDays) == [2])
        #expect(try db.logs(longAway).map(\.missedDays) == [2])
    }

    // MARK: A check-in during the run

    @Test("check-ins committed while a slow run is sending stop the remaining alerts: only the claimed ones go out, the rest are cancelled")
    func checkInDuringRun() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let count = 10
        var users: [String] = []
        for i in 0..<count { users.append(try db.addUser(name: "U\(i)", email: mail.address("slow1u\(i)"), checkIns: ["2026-01-10"])) }
        let (process, out, err) = try NotifierProcess.start(
            ["--run-now", "--date", "2026-01-13"],
            environment: try NotifierProcess.environment(database: db, ["SMTP_CONNECTIONS": "1"]))
        // Wait for the first claim (each mail takes the server a second), then everyone checks in.
        var claimed = 0
        for _ in 0..<200 where claimed == 0 {
            claimed = Int(try db.query("SELECT count(*) FROM notification_logs")[0][0] ?? "0") ?? 0
            if claimed == 0 { Thread.sleep(forTimeInterval: 0.05) }
        }
        for user in users { try db.checkIn(user, "2026-01-13") }
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0)
        let rows = try db.query("SELECT count(*) FROM notification_logs")[0][0].flatMap { Int($0) } ?? -1
        let delivered = try mail.deliveries().count
        #expect(claimed > 0 && claimed <= 4, "the first claim statement takes at most Dispatcher.claimBatch (4) jobs")
        #expect(delivered == rows, "only claimed mails go out")
        #expect(rows == claimed, "no claim after the check-ins committed")
        #expect(result.stderr.contains("\(count - claimed) cancelled during the run"))
        #expect(result.stderr.contains("notification cancelled for user"))
        #expect(try db.query("SELECT cancelled, busy_elsewhere FROM sileme.notifier_runs") == [[String(count - claimed), "0"]])
    }

    // MARK: Every report

    @Test("each decision in every report format: dry-run table, JSON and CSV, --preview, report per day and per user, check")
    func everyReport() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let contact = mail.address("c")
        let future = try db.addUser(name: "Future", email: mail.address("f"), checkIns: ["2026-01-10", "2099-01-01"])
        let old = try db.addUser(name: "Old", email: contact, checkIns: ["2026-01-09"])
        let new = try db.addUser(name: "Old", email: contact, checkIns: ["2026-01-12"])
        let paused = try db.addUser(name: "Paused", email: mail.address("p"), checkIns: ["2026-01-10"])
        let staleFuture = try db.addUser(name: "StaleFuture", email: mail.address("sf"), checkIns: ["2025-10-01", "2098-05-05"])
        try db.query("UPDATE users SET paused_until = '2026-01-15' WHERE id = $1", [paused])
        _ = new

        let table = try Self.dryRun(db, "2026-01-13", "table")
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        func noteAfter(_ user: String) -> String? {
            guard let i = lines.firstIndex(where: { $0.hasPrefix(String(user.prefix(8))) }), i + 1 < lines.count else { return nil }
            return lines[i + 1].hasPrefix("  ↳ ") ? lines[i + 1] : nil
        }
        #expect(lines.contains { $0.hasPrefix(String(old.prefix(8))) && $0.hasSuffix("superseded") })
        #expect(noteAfter(old) == "  ↳ newer account \(new) checked in 2026-01-12")
        #expect(noteAfter(paused) == "  ↳ paused until 2026-01-15")
        #expect(noteAfter(future) == "  ↳ ignored future-dated check-in 2099-01-01")
        #expect(lines.contains("Ignored: check-ins dated after the day after the run date, of 2 user(s)"))
        #expect(lines.last == "Summary: send 1, already_notified 0, stale 1, invalid_email 0, invalid_name 0, superseded 1, paused 1")

        let json = try Self.json(db, "2026-01-13")
        #expect(json.summary == ["send": 1, "already_notified": 0, "stale": 1, "invalid_email": 0, "invalid_name": 0,
                                 "superseded": 1, "paused": 1, "held": 0])
        #expect(json.users[staleFuture]?["decision"] as? String == "stale")
        #expect(json.users[staleFuture]?["ignored_future_check_in"] as? String == "2098-05-05")

        let csv = try Self.dryRun(db, "2026-01-13", "csv")
        let csvLines = csv.stdout.components(separatedBy: "\r\n")
        func csvLine(_ user: String) -> String? { csvLines.first { $0.hasPrefix(user + ",") } }
        #expect(csvLine(old)?.contains(",superseded,superseded: newer account \(new)") == true)
        #expect(csvLine(paused)?.hasSuffix(",paused,paused until 2026-01-15") == true)
        #expect(csvLine(future)?.hasSuffix(",send,ignored future-dated check-in 2099-01-01") == true)

        let env = try NotifierProcess.environment(database: db)
        func preview(_ user: String, _ day: String = "2026-01-13") throws -> String {
            try NotifierProcess.run(["--run-now", "--dry-run", "--date", day, "--preview", user], environment: env).stderr
        }
        #expect(try preview(old).contains("superseded (m = 3, last check-in 2026-01-09): superseded: newer account \(new)"))
        #expect(try preview(paused).contains("paused (m = 2, last check-in 2026-01-10): paused until 2026-01-15"))
        #expect(try preview(future).contains("send (m = 2, last check-in 2026-01-10); ignored future-dated check-in 2099-01-01"))
        #expect(try preview(paused, "2026-01-18").contains("send (m = 2, last check-in 2026-01-10, counted from the end of a pause on 2026-01-15)"))

        // The real run's counts agree with the dry run's, stale included.
        let run = try Self.run(db, "2026-01-13")
        #expect(run.status == 0)
        #expect(try db.query("SELECT due, stale, superseded, paused, future_ignored FROM sileme.notifier_runs") == [["1", "1", "1", "1", "2"]])

        // The history: per day (the run's guard counts, the superseded skip) and per user (streaks).
        let day = try NotifierProcess.run(["report", "--from", "2026-01-13", "--to", "2026-01-13", "--format", "json"], environment: env)
        let dayObject = try #require(try JSONSerialization.jsonObject(with: Data(day.stdout.utf8)) as? [String: Any])
        let runRecord = try #require((dayObject["runs"] as? [[String: Any]])?.first)
        #expect(runRecord["superseded"] as? Int == 1)
        #expect(runRecord["paused"] as? Int == 1)
        #expect(runRecord["future_ignored"] as? Int == 2)
        #expect(runRecord["cancelled"] as? Int == 0)
        let dayTable = try NotifierProcess.run(["report", "--from", "2026-01-13", "--to", "2026-01-13"], environment: env).stdout
        #expect(dayTable.contains("1 superseded, 1 paused, 2 with future-dated check-ins"))
        let dayCSV = try NotifierProcess.run(["report", "--from", "2026-01-13", "--to", "2026-01-13", "--format", "csv"], environment: env).stdout
        // The guards' columns, in order (the bounce columns follow them).
        #expect(dayCSV.components(separatedBy: "\r\n").first?.contains(",reason,superseded,paused,cancelled,future_ignored,held,") == true,
                "\(dayCSV.components(separatedBy: "\r\n").first ?? "")")
        let dayHTML = try NotifierProcess.run(["report", "--from", "2026-01-13", "--to", "2026-01-13", "--format", "html"], environment: env).stdout
        #expect(dayHTML.contains("<td>1 superseded, 1 paused, 2 with future-dated check-ins ignored</td>"))

        func streaks(_ user: String) throws -> [[String: Any]] {
            let result = try NotifierProcess.run(["report", "--from", "2026-01-01", "--to", "2026-01-13", "--format", "json", "--user", user],
                                                 environment: env)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            return object["streaks"] as? [[String: Any]] ?? []
        }
        #expect(try streaks(old).map { $0["outcome"] as? String } == ["superseded"])
        #expect(try streaks(paused).map { $0["outcome"] as? String } == ["paused"])
        let futureStreak = try streaks(future)
        #expect(futureStreak.map { $0["outcome"] as? String } == ["notified"])
        #expect(futureStreak.first?["next_check_in_date"] is NSNull, "the 2099 row does not end the streak")
        let userTable = try NotifierProcess.run(["report", "--from", "2026-01-01", "--to", "2026-01-13", "--user", old], environment: env).stdout
        #expect(userTable.contains("superseded: a newer account checked in"))

        let check = try NotifierProcess.run(["check"], environment: env)
        #expect(check.stderr.contains("supersede on") || check.stdout.contains("supersede on"))
    }
}
