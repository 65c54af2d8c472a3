import Foundation
@testable import Store
import TestSupport
import Testing
import Values

/// The alert lifecycle on real servers (docs/lifecycle.md): several contacts and one that refuses,
/// all-clears while the daemon runs and after it was down, introductions, follow-ups, the upgrade
/// of a database written before the lifecycle, and crashes with contacts and kinds.
@Suite("The alert lifecycle on real servers", .serialized)
struct LifecycleIntegrationTests {
    static let date = "2026-01-13"

    /// Adds `emails` as the user's contacts, at positions 1, 2, …
    static func addContacts(_ db: TestDatabase, _ user: String, _ emails: [String]) throws {
        for (index, email) in emails.enumerated() {
            try db.query("INSERT INTO emergency_contacts (user_id, email, position) VALUES ($1, $2, $3)",
                         [user, email, String(index + 1)])
        }
    }

    /// The rows of `user`: (kind, contact, status, email_sent, message_id, in_reply_to), ordered.
    static func rows(_ db: TestDatabase, _ user: String) throws -> [[String?]] {
        try db.query("""
            SELECT kind, contact, status, email_sent::text, message_id, in_reply_to, notification_date::text
            FROM notification_logs WHERE user_id = $1 ORDER BY kind, contact, notification_date
            """, [user])
    }

    /// Starts the daemon with its daily run hours away and today's and yesterday's runs recorded
    /// as done, so that all it does is the all-clear work.
    static func startDaemonWithoutDailyRun(_ db: TestDatabase, _ environment: [String: String]) throws -> (Process, Pipe, Pipe) {
        let fire = DaemonIntegrationTests.localTime(offset: 3 * 3600)
        try DaemonIntegrationTests.completedRun(db, on: fire.date)
        try DaemonIntegrationTests.completedRun(db, on: fire.date.adding(days: -1))
        var env = environment
        env["NOTIFY_TIME"] = fire.time
        return try NotifierProcess.start([], environment: env)
    }

    @Test("three contacts, one answering 550: the other two get one alert each, the refused one is undeliverable, nothing is resent")
    func threeContacts() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "张三", email: mail.address("fallback"), checkIns: ["2026-01-10"])
        try Self.addContacts(db, user, [mail.address("first"), mail.address("perm550.second"), mail.address("third")])
        let env = try NotifierProcess.environment(database: db)
        let run = try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env)
        #expect(run.status == 75, "a permanent failure: \(run.stderr.suffix(800))")
        let sent = try mail.deliveries()
        #expect(sent.map(\.recipient).sorted() == [mail.address("first"), mail.address("third")].sorted(),
                "the fallback address is not a contact once the user has contact rows")
        #expect(Set(sent.map(\.messageID)).count == 2, "one Message-ID per contact")
        let statuses = try db.query("SELECT email, status, last_reply FROM contact_status WHERE user_id = $1 ORDER BY email", [user])
        #expect(statuses.map { [$0[0], $0[1]] } == [
            [mail.address("first"), "ok"], [mail.address("perm550.second"), "undeliverable"], [mail.address("third"), "ok"],
        ])
        #expect(statuses[1][2]?.contains("5.1.1") == true)
        #expect(try Self.rows(db, user).map { [$0[1], $0[2]] } == [
            [mail.address("first"), "sent"], [mail.address("perm550.second"), "failed"], [mail.address("third"), "sent"],
        ])
        // The next run and a retry: the streak was notified, nobody gets a second alert.
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env).status == 0)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: env).status == 0)
        let plan = try NotifierProcess.run(["retry", "--date", Self.date, "--dry-run", "--json"], environment: env)
        let planned = try #require((try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["retry"] as? [[String: Any]])
        #expect(planned.map { [$0["kind"] as? String, $0["status"] as? String, $0["decision"] as? String] }
                == [["alert", "failed", "already_notified"]], "the refusal is listed, not re-sent: another contact was told")
        let onlyIntroductions = try NotifierProcess.run(["retry", "--date", Self.date, "--kind", "introduction", "--dry-run", "--json"],
                                                        environment: env)
        #expect(onlyIntroductions.stdout.contains("\"retry\":[]"))
        #expect(try NotifierProcess.run(["retry", "--date", Self.date, "--kind", "bogus"], environment: env).status == 64)
        #expect(try NotifierProcess.run(["retry", "--date", Self.date], environment: env).status == 0)
        #expect(try mail.deliveries().count == 2)
        // The history report lists the undeliverable contact.
        let report = try NotifierProcess.run(["report", "--from", "2026-01-13", "--to", "2026-01-14", "--format", "json"], environment: env)
        #expect(report.status == 0)
        let history = try #require(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let undeliverable = try #require(history["undeliverable_contacts"] as? [[String: Any]])
        #expect(undeliverable.map { $0["email"] as? String } == [EmailMasking.mask(mail.address("perm550.second"))])
        #expect((history["by_kind"] as? [[String: Any]])?.first?["sent"] as? Int == 2)
        // The dry run lists the contacts an alert goes to.
        try db.query("DELETE FROM notification_logs")
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--date", Self.date, "--format", "json", "--full-emails"],
                                          environment: env)
        let users = try #require((try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])?["users"] as? [[String: Any]])
        #expect((users.first?["contacts"] as? [[String: Any]])?.compactMap { $0["email"] as? String }
                == [mail.address("first"), mail.address("perm550.second"), mail.address("third")])
    }

    @Test("a check-in while the daemon runs: each alerted contact gets one all-clear within 60 s, threaded under its alert")
    func allClearWhileRunning() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "李四", email: mail.address("unused"), checkIns: ["2026-01-10"])
        try Self.addContacts(db, user, [mail.address("a"), mail.address("b"), mail.address("perm550.c")])
        let env = try NotifierProcess.environment(database: db, ["ALL_CLEAR_POLL_SECONDS": "1"])
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env).status == 75)
        let alerts = Dictionary(uniqueKeysWithValues: try mail.deliveries().map { ($0.recipient, $0.messageID) })
        #expect(alerts.count == 2)
        let daemon = try Self.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 2)
        #expect(try mail.deliveries().count == 2, "no all-clear before the check-in")
        let checkedIn = Date()
        try db.checkIn(user, "2026-01-14")
        #expect(try DaemonIntegrationTests.eventually(60) { try mail.deliveries().count >= 4 }, "all-clears within 60 s")
        let latency = Date().timeIntervalSince(checkedIn)
        Thread.sleep(forTimeInterval: 3)  // three more sweeps: nothing is sent twice
        kill(daemon.0.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(result.status == 0)
        let clears = try mail.deliveries().dropFirst(2)
        #expect(clears.count == 2, "one all-clear per contact that got the alert, none to the refused one")
        for clear in clears {
            let parsed = try MailParser.parse(clear.raw)
            let alert = try #require(alerts[clear.recipient] ?? nil, "an all-clear only to an alerted contact")
            #expect(parsed.headers["In-Reply-To"] == [alert])
            #expect(parsed.headers["References"] == [alert])
            #expect(parsed.headers["Subject"]?.first?.contains("李四 已签到") == true)
            #expect(parsed.text?.contains("2026-01-13 曾告知您 TA 已连续 2 天未签到") == true, "\(parsed.text ?? "")")
        }
        #expect(try db.query("SELECT count(*) FROM sileme.pending_all_clears").first?.first == "0", "the queue is settled")
        print("all-clear latency (check-in commit → both accepted, daemon listening): \(String(format: "%.2f", latency)) s")
    }

    @Test("SIGTERM while the watcher's fold or all-clear pass waits on the database: it is cancelled and the daemon ends at once")
    func stopCancelsAllClearPass() throws {
        let db = try TestDatabase()
        let env = try NotifierProcess.environment(database: db, ["ALL_CLEAR_POLL_SECONDS": "1"])
        // Another session holds the all-clear queue: the daemon's first fold (which may queue
        // users in it) waits for it.
        let blocker = try PGConnection(Secret(db.url), schema: .standard)
        try blocker.execute("BEGIN")
        try blocker.execute("LOCK TABLE sileme.pending_all_clears IN ACCESS EXCLUSIVE MODE")
        defer { _ = try? blocker.execute("ROLLBACK") }
        let daemon = try Self.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(20) {
            try db.query("""
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'
                  AND (query LIKE '%pending_all_clears%' OR query LIKE '%sileme_fold_check_ins%')
                """).first?.first != "0"
        }, "the fold waits for the lock")
        let stopped = Date()
        kill(daemon.0.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(20)
        while daemon.0.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let took = Date().timeIntervalSince(stopped)
        #expect(!daemon.0.isRunning, "the daemon ended while the lock was still held")
        if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) }
        let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(result.status == 0, "\(result.stderr.suffix(1500))")
        #expect(took < 8, "ended \(took) s after SIGTERM")
        #expect(try db.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
            .first?.first == "0", "no statement of the daemon's left waiting")
    }

    @Test("a check-in while the daemon is down: the all-clear goes out at its start; --run-now sends one too")
    func allClearAfterDowntime() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let down = try db.addUser(name: "王五", email: mail.address("down"), checkIns: ["2026-01-10"])
        let byHand = try db.addUser(name: "赵六", email: mail.address("byhand"), checkIns: ["2026-01-10"])
        let env = try NotifierProcess.environment(database: db)
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env).status == 0)
        try db.checkIn(down, "2026-01-15")
        try db.checkIn(byHand, "2026-01-15")
        #expect(try db.query("SELECT count(*) FROM sileme.check_in_queue").first?.first == "2", "appended, not folded: no daemon runs")
        try db.foldCheckIns()
        #expect(try db.query("SELECT count(*) FROM sileme.pending_all_clears").first?.first == "2", "the fold queued both")
        // The dry run shows them, per kind and contact, and writes nothing.
        let before = try db.dump()
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-16", "--format", "json"], environment: env)
        #expect(try db.dump() == before)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        let messages = try #require(report["messages"] as? [[String: Any]])
        #expect(messages.map { $0["kind"] as? String } == ["all_clear", "all_clear"])
        #expect(Set(messages.compactMap { $0["email"] as? String }) == [EmailMasking.mask(mail.address("down")),
                                                                        EmailMasking.mask(mail.address("byhand"))])
        #expect((report["messages_summary"] as? [String: Int]) == ["alert": 0, "all_clear": 2, "follow_up": 0, "introduction": 0, "reminder": 0,
                                                                    "acknowledged": 0, "undeliverable": 0, "escalation": 0, "unheard": 0,
                                                                    "outcome_ok": 0, "outcome_unreachable": 0])
        // --run-now (any date) answers the queue.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-16"], environment: env).status == 0)
        #expect(try mail.deliveries().count == 4)
        // A later check-in after a second alert, the daemon down: answered at its start.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-18"], environment: env).status == 0)
        #expect(try mail.deliveries().count == 6, "a new streak, new alerts")
        try db.checkIn(down, "2026-01-19")
        let daemon = try Self.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(30) { try mail.deliveries().count == 7 })
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
        let kinds = try db.query("SELECT kind, count(*)::text FROM notification_logs WHERE email_sent GROUP BY kind ORDER BY kind")
        #expect(kinds == [["alert", "4"], ["all_clear", "3"]])
        let last = try MailParser.parse(try #require(try mail.deliveries().last).raw)
        let secondAlert = try db.query("""
            SELECT '<' || message_id || '>' FROM notification_logs WHERE user_id = $1 AND kind = 'alert' AND notification_date = '2026-01-18'
            """, [down]).first?.first ?? nil
        #expect(last.headers["In-Reply-To"] == [try #require(secondAlert)], "threaded under the streak's own alert")
    }

    @Test("introductions: once per new pair, none for pairs present at the upgrade unless asked; an upgraded database keeps its alerts")
    func introductionsAndUpgrade() throws {
        let db = try TestDatabase(migrate: false)
        let mail = try Mailbox()
        // The schema before the lifecycle (migrations up to 009), with data in it.
        let old = FileManager.default.temporaryDirectory.appendingPathComponent("sileme-old-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: old) }
        for file in try FileManager.default.contentsOfDirectory(atPath: TestDatabase.migrationsDirectory) where file < "010" {
            try FileManager.default.copyItem(atPath: TestDatabase.migrationsDirectory + "/" + file, toPath: old.appendingPathComponent(file).path)
        }
        try Migrator(directory: old.path).migrate(db.connection)
        let notified = try db.addUser(name: "Old Notified", email: " " + mail.address("Old.Notified"), checkIns: ["2026-01-10"])
        let retrying = try db.addUser(name: "Old Retry", email: mail.address("old.retry"), checkIns: ["2026-01-10"])
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status, message_id, sent_at)
            VALUES ($1, '2026-01-13', true, 2, 'sent', 'sileme.old.1@sileme.app', now()),
                   ($2, '2026-01-13', false, 2, 'retry', 'sileme.old.2@sileme.app', NULL)
            """, [notified, retrying])
        var env = try NotifierProcess.environment(database: db, ["INTRODUCE_CONTACTS": "on"])
        #expect(try NotifierProcess.run(["migrate"], environment: env).status == 0)
        #expect(try db.query("SELECT kind, channel, contact FROM notification_logs ORDER BY message_id") == [
            ["alert", "email", mail.address("old.notified")], ["alert", "email", mail.address("old.retry")],
        ], "old rows: alerts by e-mail to the one contact (trimmed, lower-cased)")
        #expect(try db.query("SELECT state, count(*)::text FROM sileme.known_contacts GROUP BY state") == [["existing", "2"]])
        // A new user with two contacts (and a fallback address that is not in force).
        let fresh = try db.addUser(name: "New", email: mail.address("new.fallback"), checkIns: ["2026-01-12"])
        try Self.addContacts(db, fresh, [mail.address("new.one"), mail.address("new.two")])
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env).status == 0)
        var recipients = try mail.deliveries().map(\.recipient)
        #expect(recipients.sorted() == [mail.address("new.one"), mail.address("new.two"), mail.address("old.retry")].sorted(),
                "two introductions; the old retry row sent; nothing to the notified user or the unused fallback")
        #expect(try mail.deliveries().first { $0.recipient == mail.address("old.retry") }?.messageID == "<sileme.old.2@sileme.app>",
                "the old row itself was claimed, with its Message-ID")
        let intro = try MailParser.parse(try #require(try mail.deliveries().first { $0.recipient == mail.address("new.one") }).raw)
        #expect(intro.headers["Subject"]?.first?.contains("New 将您设为紧急联系人") == true)
        #expect(intro.text?.contains("如果 TA 连续 2 天没有签到") == true)
        // Once per pair: later runs introduce nobody again.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: env).status == 0)
        recipients = try mail.deliveries().map(\.recipient)
        #expect(recipients.count == 3, "no second introduction (and the new user is not due before 01-15): \(recipients)")
        // The operator asks for the pairs known at the upgrade.
        let asked = try NotifierProcess.run(["introduce", "--existing"], environment: env)
        #expect(asked.status == 0 && asked.stderr.contains("2 contact(s) will be introduced"))
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-15"], environment: env).status == 0)
        #expect(try mail.deliveries().count == 7, "two introductions of the old pairs, the new user's two alerts")
        let introduced = try db.query("SELECT contact FROM notification_logs WHERE kind = 'introduction' AND email_sent ORDER BY contact")
        #expect(introduced.compactMap { $0[0] } == [mail.address("new.one"), mail.address("new.two"),
                                                    mail.address("old.notified"), mail.address("old.retry")].sorted())
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-16"], environment: env).status == 0)
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE kind = 'introduction'").first?.first == "4", "each pair once")
        // INTRODUCE_CONTACTS=off: a new pair is recorded, not mailed.
        env["INTRODUCE_CONTACTS"] = "off"
        try db.query("INSERT INTO emergency_contacts (user_id, email, position) VALUES ($1, $2, 3)", [fresh, mail.address("new.three")])
        let before = try mail.deliveries().count
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-16"], environment: env).status == 0)
        #expect(try mail.deliveries().count == before)
        #expect(try db.query("SELECT state FROM sileme.known_contacts WHERE contact = $1", [mail.address("new.three")]) == [["not_introduced"]])
    }

    @Test("follow-up: one, threaded, on day N after the alert when FOLLOW_UP_DAYS = N; none when off or after a check-in")
    func followUp() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let silent = try db.addUser(name: "Silent", email: mail.address("silent"), checkIns: ["2026-01-10"])
        let back = try db.addUser(name: "Back", email: mail.address("back"), checkIns: ["2026-01-10"])
        let off = try NotifierProcess.environment(database: db)
        let on = try NotifierProcess.environment(database: db, ["FOLLOW_UP_DAYS": "2"])
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.date], environment: on).status == 0)
        try db.checkIn(back, "2026-01-14")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: on).status == 0)
        #expect(try mail.deliveries().count == 3, "two alerts and Back's all-clear; no follow-up on day 1")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-15"], environment: off).status == 0)
        #expect(try mail.deliveries().count == 3, "FOLLOW_UP_DAYS=0 sends none")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-15"], environment: on).status == 0)
        let all = try mail.deliveries()
        #expect(all.count == 4)
        let followUp = try MailParser.parse(try #require(all.last).raw)
        #expect(all.last?.recipient == mail.address("silent"))
        let alert = try #require(all.first { $0.recipient == mail.address("silent") }?.messageID)
        #expect(followUp.headers["In-Reply-To"] == [alert])
        #expect(followUp.text?.contains("TA 已连续 4 天未签到") == true, "\(followUp.text ?? "")")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-16"], environment: on).status == 0)
        #expect(try mail.deliveries().count == 4, "one follow-up per streak")
        #expect(try Self.rows(db, silent).map { $0[0] } == ["alert", "follow_up"])
    }

    @Test("SIGKILLs mid-dispatch with two contacts and introductions: every (user, kind, contact) sent once, duplicates only in flight")
    func killsWithContactsAndKinds() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = 150
        try db.addUsers(count: users, domain: mail.domain, lastCheckIn: "2026-01-10")
        try db.query("""
            INSERT INTO emergency_contacts (user_id, email, position)
            SELECT id, 'a.' || emergency_email, 1 FROM users UNION ALL SELECT id, 'b.' || emergency_email, 2 FROM users
            """)
        let expected = users * 4   // two introductions and two alerts per user
        let seed = UInt64(ProcessInfo.processInfo.environment["SILEME_KILL_SEED"] ?? "") ?? UInt64(Date().timeIntervalSince1970)
        var random = SeededGenerator(seed: seed)
        let env = try NotifierProcess.environment(database: db, ["SMTP_CONNECTIONS": "3", "SMTP_RATE_LIMIT": "150",
                                                                 "INTRODUCE_CONTACTS": "on"])
        var unrecorded = Set<String>()
        let kills = 10
        for _ in 0..<kills {
            let (process, out, err) = try NotifierProcess.start(["--run-now", "--date", Self.date], environment: env)
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...1.0, using: &random))
            kill(process.processIdentifier, SIGKILL)
            _ = NotifierProcess.finish(process, out, err)
            try CrashAndRaceIntegrationTests.waitForNoNotifierSessions(db)
            Thread.sleep(forTimeInterval: 0.3)
            let sent = Set(try db.query("SELECT message_id FROM notification_logs WHERE email_sent").compactMap { $0[0].map { "<\($0)>" } })
            for delivery in try mail.deliveries() where !sent.contains(delivery.messageID ?? "") { unrecorded.insert(delivery.file) }
        }
        // Two processes racing to the end.
        let racers = try (0..<2).map { _ in try NotifierProcess.start(["--run-now", "--date", Self.date], environment: env) }
        let results = racers.map { NotifierProcess.finish($0.0, $0.1, $0.2) }
        #expect(results.map(\.status) == [0, 0], "\(results.map { $0.stderr.suffix(600) })")
        #expect(try db.query("""
            SELECT count(*)::text, count(*) FILTER (WHERE email_sent)::text, count(DISTINCT (user_id, kind, contact))::text
            FROM notification_logs
            """).first == ["\(expected)", "\(expected)", "\(expected)"], "one sent row per (user, kind, contact)")
        let missing = try db.query("""
            SELECT k.contact, k.state, (SELECT string_agg(kind || ':' || status, ',') FROM notification_logs n
                                        WHERE n.user_id = k.user_id AND n.contact = k.contact)
            FROM sileme.known_contacts k JOIN emergency_contacts e ON e.user_id = k.user_id AND e.email = k.contact
            WHERE (SELECT count(*) FROM notification_logs n WHERE n.user_id = k.user_id AND n.contact = k.contact AND n.email_sent) <> 2
            """)
        #expect(missing.isEmpty, "contacts without both messages: \(missing.prefix(10))")
        let deliveries = try mail.deliveries()
        let byMessage = Dictionary(grouping: deliveries, by: { $0.messageID ?? "" })
        #expect(byMessage.count == expected, "nothing lost")
        #expect(deliveries.count == expected + unrecorded.count, "duplicates are exactly the mails in flight at the kills")
        let perRecipient = Dictionary(grouping: deliveries, by: \.recipient).mapValues { Set($0.map(\.messageID)).count }
        #expect(perRecipient.count == users * 2 && perRecipient.values.allSatisfy { $0 == 2 }, "an introduction and an alert to each contact")
        print("Kills with contacts and kinds (seed \(seed)): \(kills) SIGKILLs over \(expected) messages; duplicates \(unrecorded.count); lost 0")
    }
}
