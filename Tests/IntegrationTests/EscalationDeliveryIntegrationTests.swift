import Foundation
import Store
import TestSupport
import Testing
import Values

/// What an escalated streak owes, delivered on the real servers (docs/escalation.md): a run
/// sends each notice through the claim machinery like every other message, threaded under the
/// contact's own alert, and never twice.
@Suite("Escalation: the owed notices delivered", .enabled(if: TestEnvironment.enabled))
struct EscalationDeliveryIntegrationTests {
    static let day = CalendarDate(parsing: "2026-01-13")!

    @Test("the first alert leaves the second tier out; a streak recorded escalated: each first-tier contact whose alert stands gets one notice, threaded, the second tier its first alert, dated as the streak's; a second run sends nothing")
    func notices() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let env = try NotifierProcess.environment(database: db, ["INTRODUCE_CONTACTS": "off"])
        let user = try Self.alerted(db, mail, [("a", 1), ("b", 1), ("c", 1), ("n", 2)], env: env)
        let alerts = try mail.deliveries()
        #expect(alerts.map(\.recipient).sorted() == ["a", "b", "c"].map(mail.address), "the second tier waits for the escalation")
        try db.query("UPDATE notification_logs SET status = 'bounced' WHERE user_id = $1 AND contact = $2", [user, mail.address("b")])
        #expect(try EscalationStore.escalate(db.connection, userID: user, alertDate: Self.day, at: Date()))

        let second = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(second.status == 0, "\(second.stderr)")
        let sent = Array(try mail.deliveries().dropFirst(alerts.count))
        let notices = sent.filter { $0.recipient != mail.address("n") }
        #expect(notices.map(\.recipient).sorted() == [mail.address("a"), mail.address("c")], "b bounced, n is the second tier")
        for notice in notices {
            let alertID = try #require(try db.query("""
                SELECT message_id FROM notification_logs WHERE user_id = $1 AND kind = 'alert' AND contact = $2
                """, [user, notice.recipient]).first?[0] ?? nil)
            let raw = String(decoding: notice.raw, as: UTF8.self)
            #expect(raw.contains("\r\nIn-Reply-To: <\(alertID)>\r\nReferences: <\(alertID)>\r\n"), "\(raw.prefix(800))")
            let text = try #require(try MailParser.parse(notice.raw).text)
            #expect(text.contains("还没有任何紧急联系人表示正在前往查看 TA"), "\(text)")
        }
        let neighbour = try #require(sent.first { $0.recipient == mail.address("n") }, "the second tier's first alert")
        let raw = String(decoding: neighbour.raw, as: UTF8.self)
        #expect(!raw.contains("In-Reply-To:"), "an alert starts its own thread")
        #expect(try MailParser.parse(neighbour.raw).text?.contains("独居者") == true)
        #expect(try db.query("""
            SELECT kind, contact, notification_date::text, status, email_sent::text FROM notification_logs
            WHERE user_id = $1 AND kind IN ('escalation', 'alert') AND channel = 'email' AND status <> 'bounced' ORDER BY kind, contact
            """, [user]) == [["alert", mail.address("a"), Self.day.description, "sent", "true"],
                             ["alert", mail.address("c"), Self.day.description, "sent", "true"],
                             ["alert", mail.address("n"), Self.day.description, "sent", "true"],
                             ["escalation", mail.address("a"), Self.day.description, "sent", "true"],
                             ["escalation", mail.address("c"), Self.day.description, "sent", "true"]])

        let third = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(try mail.deliveries().count == alerts.count + sent.count, "once per streak and contact")
        // A check-in now tells the second tier too: it was alerted.
        try db.checkIn(user, "2026-01-13")
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env).status == 0)
        #expect(Set(try mail.deliveries().dropFirst(alerts.count + sent.count).map(\.recipient)) == Set(["a", "c", "n"].map(mail.address)),
                "the all-clears: to every contact whose alert stands")
    }

    @Test("the second tier alerted at once when nobody else would be: escalation off (ESCALATE_AFTER=0), or a user whose contacts are all of the second tier; the dry run shows each contact's tier")
    func secondTierAtOnce() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let off = try NotifierProcess.environment(database: db, ["INTRODUCE_CONTACTS": "off", "ESCALATE_AFTER": "0"])
        _ = try Self.alerted(db, mail, [("a", 1), ("n", 2)], env: off)
        #expect(try mail.deliveries().map(\.recipient).sorted() == ["a", "n"].map(mail.address))

        let db2 = try TestDatabase()
        let env = try NotifierProcess.environment(database: db2, ["INTRODUCE_CONTACTS": "off"])
        for (number, (user, contacts)) in [("独居者", [("m", 2), ("p", 2)]), ("有家人", [("f", 1), ("q", 2)])].enumerated() {
            let id = try db2.addUser(name: user, email: mail.address("old\(number)"), checkIns: ["2026-01-10"])
            for (index, (local, tier)) in contacts.enumerated() {
                try db2.query("INSERT INTO emergency_contacts (user_id, email, position, tier) VALUES ($1, $2, $3, $4)",
                              [id, mail.address(local), String(index + 1), String(tier)])
            }
        }
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--date", Self.day.description, "--format", "json", "--full-emails"],
                                          environment: env)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains(#""contacts":[{"email":"\#(mail.address("m"))","position":1,"tier":2,"language":"zh-Hans"},{"email":"\#(mail.address("p"))","position":2,"tier":2,"language":"zh-Hans"}]"#),
                "\(dry.stdout)")
        #expect(dry.stdout.contains(#""contacts":[{"email":"\#(mail.address("f"))","position":1,"tier":1,"language":"zh-Hans"}],"second_tier_waiting":[{"email":"\#(mail.address("q"))","position":2,"tier":2,"language":"zh-Hans"}]"#),
                "\(dry.stdout)")
        let run = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try mail.deliveries().dropFirst(2).map(\.recipient).sorted() == ["f", "m", "p"].map(mail.address))
    }

    /// A user alerted on the 13th through `contacts` (address, tier), by a real run.
    static func alerted(_ db: TestDatabase, _ mail: Mailbox, _ contacts: [(String, Int)], env: [String: String]) throws -> String {
        let user = try missing(db, mail, contacts)
        let run = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        return user
    }

    /// A user named `name` whose last check-in was three days before `day` (the 13th by default),
    /// with `contacts` (address, tier) in that order; nothing is run.
    static func missing(_ db: TestDatabase, _ mail: Mailbox, _ contacts: [(String, Int)], name: String = "独居者",
                        day: CalendarDate = Self.day) throws -> String {
        let user = try db.addUser(name: name, email: mail.address("old-" + (contacts.first?.0 ?? "")), checkIns: [day.adding(days: -3).description])
        for (index, (local, tier)) in contacts.enumerated() {
            try db.query("INSERT INTO emergency_contacts (user_id, email, position, tier) VALUES ($1, $2, $3, $4)",
                         [user, mail.address(local), String(index + 1), String(tier)])
        }
        return user
    }

    /// Today in the service zone (the daemon's date: its passes read the streaks of the last 40 days).
    static var today: CalendarDate { CalendarDate(Date(), in: TimeZone(identifier: "Asia/Shanghai")!) }

    @Test("ESCALATE_AFTER in seconds: a run after it escalates the unheard streak (the notices go out in it), the next one declares it unheard (crit); an acknowledged streak never escalates")
    func steps() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let env = try NotifierProcess.environment(database: db, ["INTRODUCE_CONTACTS": "off", "ESCALATE_AFTER": "2s"])
        let user = try Self.alerted(db, mail, [("a", 1), ("b", 1), ("c", 1)], env: env)
        let heard = try db.addUser(name: "有人管", email: mail.address("h"), checkIns: ["2026-01-10"])
        let run0 = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(run0.status == 0 && !run0.stderr.contains("escalated ("), "not yet: \(run0.stderr)")
        try db.query("""
            INSERT INTO sileme.acknowledgements (user_id, alert_date, contact, last_check_in_date) VALUES ($1, $2, $3, '2026-01-10')
            """, [heard, Self.day.description, mail.address("h")])
        #expect(try mail.deliveries().count == 4)
        Thread.sleep(forTimeInterval: 2.2)

        let run1 = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(run1.status == 0, "\(run1.stderr)")
        #expect(run1.stderr.contains("for user \(user) not heard: escalated (waited_out), 3 first-tier notice(s)"), "\(run1.stderr)")
        let notices = Array(try mail.deliveries().dropFirst(4))
        #expect(notices.map(\.recipient).sorted() == ["a", "b", "c"].map(mail.address))
        #expect(try db.query("SELECT user_id::text, stage FROM sileme.escalations ORDER BY stage")
                == [[user, "escalated"], [heard, "heard"]], "the acknowledged streak is settled, never to escalate")
        Thread.sleep(forTimeInterval: 2.2)

        let run2 = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(run2.status == 0, "\(run2.stderr)")
        #expect(run2.stderr.contains("for user \(user) unheard: nobody answered after the escalation"), "\(run2.stderr)")
        #expect(try db.query("SELECT stage FROM sileme.escalations WHERE user_id = $1", [user]) == [["unheard"]])
        #expect(try mail.deliveries().count == 7, "nothing more is mailed")
        let run3 = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(run3.status == 0 && !run3.stderr.contains("unheard:"), "once: \(run3.stderr)")
    }

    @Test("ESCALATE_AFTER=0: nothing escalates, however long")
    func off() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let env = try NotifierProcess.environment(database: db, ["INTRODUCE_CONTACTS": "off", "ESCALATE_AFTER": "0"])
        let user = try Self.alerted(db, mail, [("a", 1)], env: env)
        try db.query("UPDATE sileme.escalations SET clock_at = clock_at - interval '30 days' WHERE user_id = $1", [user])
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env).status == 0)
        #expect(try db.query("SELECT stage FROM sileme.escalations WHERE user_id = $1", [user]) == [["alerted"]])
        #expect(try mail.deliveries().count == 1)
    }

    @Test("a check-in before ESCALATE_AFTER: the all-clears, no escalation; the webhook hears checkin.escalated and notifier.unheard of an unheard streak, once each")
    func checkInAndWebhook() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let env = try NotifierProcess.environment(database: db, [
            "INTRODUCE_CONTACTS": "off", "ESCALATE_AFTER": "2s", "WEBHOOK_URL": receiver.plainURL, "WEBHOOK_SECRET": secret,
            "WEBHOOK_EVENTS": "checkin.escalated,notifier.unheard",
        ])
        let back = try Self.alerted(db, mail, [("a", 1), ("b", 1)], env: env)
        let silent = try db.addUser(name: "无人应", email: mail.address("s"), checkIns: ["2026-01-10"])
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env).status == 0)
        try db.checkIn(back, "2026-01-13")
        Thread.sleep(forTimeInterval: 2.2)
        let run1 = try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env)
        #expect(run1.status == 0, "\(run1.stderr)")
        let mails = try mail.deliveries()
        #expect(mails.filter { $0.recipient == mail.address("a") || $0.recipient == mail.address("b") }.count == 4, "the alerts, then the all-clears")
        #expect(mails.filter { $0.recipient == mail.address("s") }.count == 2, "the silent user's contact: the alert, then the escalation")
        #expect(try db.query("SELECT user_id::text, stage FROM sileme.escalations ORDER BY stage")
                == [[silent, "escalated"], [back, "heard"]])
        Thread.sleep(forTimeInterval: 2.2)
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env).status == 0)
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.day.description], environment: env).status == 0)
        let events = try receiver.received().map(\.body)
        #expect(events.filter { $0.contains("\"checkin.escalated\"") }.count == 1, "\(events)")
        #expect(events.filter { $0.contains("\"notifier.unheard\"") }.count == 1, "\(events)")
        #expect(events.allSatisfy { $0.contains(silent) }, "about the silent user only")
    }

    @Test("a step due while the daemon was down comes at its start, with its notice")
    func daemonStart() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let today = Self.today
        let user = try db.addUser(name: "独居者", email: mail.address("a"), checkIns: [today.adding(days: -3).description])
        let env = try NotifierProcess.environment(database: db, ["INTRODUCE_CONTACTS": "off", "ESCALATE_AFTER": "1s"])
        let alert = try NotifierProcess.run(["--run-now", "--date", today.description], environment: env)
        #expect(alert.status == 0, "\(alert.stderr)")
        try #require(try mail.deliveries().count == 1)
        Thread.sleep(forTimeInterval: 1.2)
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        let arrived = try DaemonIntegrationTests.eventually(30) { try mail.deliveries().count >= 2 }
        process.terminate()
        let result = NotifierProcess.finish(process, out, err)
        #expect(arrived, "\(result.stderr.suffix(1500))")
        #expect(try db.query("SELECT kind, status FROM notification_logs WHERE user_id = $1 ORDER BY id", [user])
                == [["alert", "sent"], ["escalation", "sent"]])
        #expect(try db.query("SELECT stage FROM sileme.escalations WHERE user_id = $1", [user]) == [["escalated"]])
        #expect(result.status == 0)
    }
}
