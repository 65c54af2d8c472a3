import Foundation
import TestSupport
import Testing
import Values

/// The webhook channel in the runs, on real servers (docs/webhooks.md): every event of the
/// lifecycle POSTed once beside the mails, signed and checked by the Python receiver's own HMAC;
/// injected failures retried with the same `webhook-id`; mail and webhook failures independent;
/// a body template for a gateway; `check`'s signed ping.
@Suite("Webhook events in the runs, on real servers", .serialized)
struct WebhookDeliveryIntegrationTests {
    /// The run's environment with the webhook on (over TLS to `receiver`, verified with the test CA).
    static func environment(_ db: TestDatabase, _ receiver: WebhookReceiver, secret: String, tls: Bool = true,
                            _ overrides: [String: String?] = [:]) throws -> [String: String] {
        let env = try TestEnvironment.require()
        var values: [String: String?] = [
            "WEBHOOK_URL": tls ? receiver.tlsURL : receiver.plainURL, "WEBHOOK_SECRET": secret, "WEBHOOK_CA_FILE": env.caFile,
            "WEBHOOK_TIMEOUT_SECONDS": "2",
        ]
        for (key, value) in overrides { values[key] = value }
        return try NotifierProcess.environment(database: db, values)
    }

    /// The body of `record` as JSON.
    static func json(_ record: WebhookReceiver.Record) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(record.body.utf8)) as? [String: Any])
    }

    /// The events delivered (first verified 2xx of each id), as (type, data, id).
    static func delivered(_ receiver: WebhookReceiver) throws -> [(type: String, data: [String: Any], id: String)] {
        try receiver.received().filter(\.delivered).map { record in
            let body = try json(record)
            return (body["type"] as? String ?? "", body["data"] as? [String: Any] ?? [:], record.id ?? "")
        }
    }

    /// (kind, channel, status) of `user`'s rows, ordered.
    static func rows(_ db: TestDatabase, _ user: String) throws -> [[String?]] {
        try db.query("""
            SELECT kind, channel, status FROM notification_logs WHERE user_id = $1 ORDER BY channel, kind, contact, notification_date
            """, [user])
    }

    @Test("every kind goes out once over the webhook beside the mails, signed: introduction, alert, reminder, follow-up, all-clear")
    func everyKind() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let a = try db.addUser(name: "张三", email: mail.address("a-fallback"), checkIns: ["2026-01-05", "2026-01-10"])
        try LifecycleIntegrationTests.addContacts(db, a, [mail.address("a1"), mail.address("a2")])
        let b = try db.addUser(name: "李四", email: mail.address("b"), checkIns: ["2026-01-11"])
        let env = try Self.environment(db, receiver, secret: secret, [
            "USER_REMINDER": "on", "INTRODUCE_CONTACTS": "on", "FOLLOW_UP_DAYS": "2",
        ])

        // Day 1: introductions (a1, a2, b), A's alert, B's reminder.
        let first = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(first.status == 0, "\(first.stderr.suffix(800))")
        var events = try Self.delivered(receiver)
        #expect(events.map(\.type).sorted() == ["checkin.alert", "checkin.reminder", "contact.introduction",
                                                "contact.introduction", "contact.introduction"])
        let records = try receiver.received()
        #expect(records.allSatisfy { $0.tls && $0.verified && !$0.duplicate }, "every request signed and fresh, none repeated")
        let alert = try #require(events.first { $0.type == "checkin.alert" })
        #expect(alert.data["user_id"] as? String == a && alert.data["user_name"] as? String == "张三")
        #expect(alert.data["miss_days"] as? Int == 2 && alert.data["last_check_in_date"] as? String == "2026-01-10")
        #expect((alert.data["contacts"] as? [[String: Any]])?.map { [$0["email"] as? String, ($0["position"] as? Int).map(String.init)] }
                == [[mail.address("a1"), "1"], [mail.address("a2"), "2"]])
        let reminder = try #require(events.first { $0.type == "checkin.reminder" })
        #expect(reminder.data["user_id"] as? String == b && reminder.data["miss_days"] as? Int == 1)
        #expect(reminder.data["alert_date"] as? String == "2026-01-14", "the contacts are told tomorrow")
        #expect(Set(events.filter { $0.type == "contact.introduction" }.compactMap { ($0.data["contact"] as? [String: Any])?["email"] as? String })
                == [mail.address("a1"), mail.address("a2"), mail.address("b")])
        #expect(try mail.deliveries().count == 5, "3 introductions and 2 alerts by mail; the reminder is webhook only")
        #expect(try Self.rows(db, b).filter { $0[1] == "webhook" } == [["introduction", "webhook", "sent"], ["reminder", "webhook", "sent"]])

        // The same day again: nothing new on either channel.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try receiver.received().count == records.count && (try mail.deliveries().count) == 5)

        // Day 2: B's alert (no second reminder); day 3: A's follow-up, threaded under A's alert event.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: env).status == 0)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-15"], environment: env).status == 0)
        events = try Self.delivered(receiver)
        #expect(events.filter { $0.type == "checkin.alert" }.compactMap { $0.data["user_id"] as? String }.sorted() == [a, b].sorted())
        #expect(events.filter { $0.type == "checkin.reminder" }.count == 1, "once per streak")
        let followUp = try #require(events.first { $0.type == "checkin.follow_up" })
        #expect(followUp.data["alert_message_id"] as? String == alert.id && followUp.data["user_id"] as? String == a)

        // A checks in: the all-clear, on both channels, the webhook's naming its alert event.
        try db.checkIn(a, "2026-01-15")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-15"], environment: env).status == 0)
        events = try Self.delivered(receiver)
        let clear = try #require(events.first { $0.type == "checkin.all_clear" })
        #expect(clear.data["alert_message_id"] as? String == alert.id && clear.data["checked_in_at"] is String)
        #expect(events.filter { $0.type == "checkin.all_clear" }.count == 1)
        #expect(try mail.deliveries().filter { [mail.address("a1"), mail.address("a2")].contains($0.recipient) }.count == 8,
                "a1 and a2: introduction, alert, follow-up, all-clear each")
        #expect(try receiver.received().allSatisfy { $0.verified && !$0.duplicate })

        // The history report counts the webhook's events apart; the dry run shows none left.
        let report = try NotifierProcess.run(["report", "--from", "2026-01-13", "--to", "2026-01-15", "--format", "json"], environment: env)
        let history = try #require(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let channels = try #require(history["by_channel"] as? [[String: Any]])
        #expect(channels.first { $0["channel"] as? String == "webhook" }?["sent"] as? Int == events.count)
        #expect(channels.first { $0["channel"] as? String == "email" }?["sent"] as? Int == (try mail.deliveries().count))
    }

    @Test("injected failures: 500, 429 with Retry-After, a dropped connection and a hang, then 200 — one delivery, one webhook-id on every attempt; the mail once")
    func retriesInTheRun() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret, sequence: [
            .status(500), .status(429, retryAfter: "1"), .drop, .hang, .status(200),
        ])
        let user = try db.addUser(name: "王五", email: mail.address("w"), checkIns: ["2026-01-10"])
        let env = try Self.environment(db, receiver, secret: secret, tls: false, [
            "SMTP_RETRY_ATTEMPTS": "6", "SMTP_CONNECTIONS": "1",
        ])
        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(run.status == 0, "\(run.stderr.suffix(800))")
        let records = try receiver.received()
        #expect(records.map(\.answer) == ["500", "429", "drop", "hang", "200"])
        #expect(Set(records.map(\.id)).count == 1, "the same webhook-id on every attempt")
        #expect(Set(records.map(\.body)).count == 1, "the same body on every attempt")
        #expect(records.allSatisfy(\.verified) && records.filter(\.delivered).count == 1)
        #expect(try mail.deliveries().count == 1)
        // Four attempts of the run's; libcurl itself sends a request again once when a kept-alive
        // connection turns out closed (the drop), so the receiver may count one more.
        let row = try db.query("SELECT attempts, status, message_id FROM notification_logs WHERE channel = 'webhook'")
        #expect(row.map { [$0[1], $0[2]] } == [["sent", records[0].id]])
        let attempts = try #require(row.first?[0].flatMap { Int($0 ?? "") })
        #expect((4...records.count).contains(attempts), "\(row)")
        #expect(try Self.rows(db, user) == [["alert", "email", "sent"], ["alert", "webhook", "sent"]])
    }

    @Test("mail and webhook failures are independent: a 404 is not retried but `retry` sends it; a long Retry-After waits; a 550 resends no event")
    func independence() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()

        // A 404: failed for good, the mail sent; the next run resends neither; `retry` sends the event.
        let refusing = try WebhookReceiver(secret: secret, sequence: [.status(404)])
        let one = try db.addUser(name: "甲", email: mail.address("one"), checkIns: ["2026-01-10"])
        var env = try Self.environment(db, refusing, secret: secret, tls: false)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 75)
        #expect(try Self.rows(db, one) == [["alert", "email", "sent"], ["alert", "webhook", "failed"]])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try refusing.received().count == 1 && (try mail.deliveries().count) == 1)
        #expect(try NotifierProcess.run(["retry", "--date", "2026-01-13", "--kind", "alert"], environment: env).status == 0)
        let answers = try refusing.received().map(\.answer)
        let mails = try mail.deliveries().count
        #expect(answers == ["404", "200"] && mails == 1, "the event again, the mail not: \(answers)")
        #expect(Set(try refusing.received().map(\.id)).count == 1)

        // Retry-After 120: recorded for then, not sent before; the mail once.
        let busy = try WebhookReceiver(secret: secret, sequence: [.status(429, retryAfter: "120")])
        let two = try db.addUser(name: "乙", email: mail.address("two"), checkIns: ["2026-01-10"])
        env = try Self.environment(db, busy, secret: secret, tls: false)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 75)
        let wait = try db.query("""
            SELECT status, (extract(epoch FROM next_attempt_at - now()) > 100)::text FROM notification_logs
            WHERE user_id = $1 AND channel = 'webhook'
            """, [two])
        #expect(wait == [["retry", "true"]], "the next attempt not before the endpoint's Retry-After")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try busy.received().count == 1, "not due yet")
        try db.query("UPDATE notification_logs SET next_attempt_at = now() WHERE user_id = $1 AND channel = 'webhook'", [two])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try busy.received().map(\.answer) == ["429", "200"] && Set(try busy.received().map(\.id)).count == 1)
        #expect(try mail.deliveries().filter { $0.recipient == mail.address("two") }.count == 1, "a webhook retry sends no mail")

        // The mail refused (550), the event delivered: later runs send neither again.
        let fine = try WebhookReceiver(secret: secret)
        let three = try db.addUser(name: "丙", email: mail.address("perm550.three"), checkIns: ["2026-01-10"])
        env = try Self.environment(db, fine, secret: secret, tls: false)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 75)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: env).status == 0)
        #expect(try fine.received().filter(\.delivered).count == 1, "one event for the streak")
        #expect(try Self.rows(db, three) == [["alert", "email", "failed"], ["alert", "webhook", "sent"]])
    }

    @Test("a SIGKILL while an event hangs: the next run sends it again with the same webhook-id; the receiver acts once")
    func killedWhileSending() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret, sequence: [.hang])
        _ = try db.addUser(name: "丁", email: mail.address("ding"), checkIns: ["2026-01-10"])
        let env = try Self.environment(db, receiver, secret: secret, tls: false, ["WEBHOOK_TIMEOUT_SECONDS": "60"])
        let run = try NotifierProcess.start(["--run-now", "--date", "2026-01-13"], environment: env)
        // Killed once the event hangs at the receiver and the mail, sent beside it, is recorded: a
        // kill between the SMTP server's 250 and that record would send the mail again (the crash
        // window, docs/delivery.md), which is not what this test is about.
        let hanging = try DaemonIntegrationTests.eventually(30) {
            try receiver.received().count == 1
                && db.query("SELECT status FROM notification_logs WHERE channel = 'email'") == [["sent"]]
        }
        #expect(hanging, "the event reached the receiver and the mail was recorded sent")
        kill(run.0.processIdentifier, SIGKILL)
        _ = NotifierProcess.finish(run.0, run.1, run.2)
        #expect(try db.query("SELECT status FROM notification_logs WHERE channel = 'webhook'") == [["sending"]])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        let records = try receiver.received()
        #expect(records.count == 2 && records[0].id == records[1].id, "taken over with its webhook-id")
        #expect(records.filter(\.delivered).count == 1)
        #expect(try mail.deliveries().count == 1)
    }

    @Test("a body template for an SMS gateway: its rendering is what is sent and signed; check sends a signed ping")
    func gatewayTemplateAndPing() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let user = try db.addUser(name: "Zoë \"Q\" 陈", email: mail.address("gw"), checkIns: ["2026-01-10"])
        let template = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("config/webhooks/sms-gateway.json.mustache").path
        let env = try Self.environment(db, receiver, secret: secret, ["WEBHOOK_BODY_TEMPLATE": template])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        let record = try #require(try receiver.received().first)
        #expect(record.verified && record.delivered)
        let body = try Self.json(record)
        #expect(body["reference"] as? String == record.id && body["event"] as? String == "checkin.alert")
        #expect(body["template_code"] as? String == "SILEME_ALERT" && body["user_id"] as? String == user)
        #expect((body["template_params"] as? [String: Any])?["name"] as? String == "Zoë \"Q\" 陈")

        let check = try NotifierProcess.run(["check"], environment: env)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let ping = try #require(try receiver.received().last)
        let pinged = try Self.json(ping)
        #expect(ping.verified && pinged["event"] as? String == "ping")
        #expect(check.stderr.contains("signed ping") && !(check.stdout + check.stderr).contains(secret), "\(check.stdout)\(check.stderr)")
    }
}
