import Foundation
import Store
import TestSupport
import Testing
import Values

/// Escalation end to end on the real daemon (docs/escalation.md): real PostgreSQL, the SMTP sink,
/// the webhook receiver that checks every signature, journald. The alerts come from a real run;
/// the daemon, with `ESCALATE_AFTER` in seconds, makes every step after them on its own passes.
@Suite("Escalation: the scenario on the real daemon", .enabled(if: TestEnvironment.enabled))
struct EscalationScenarioIntegrationTests {
    /// `ESCALATE_AFTER` of the scenario: short, yet long enough that "at once" and "after the
    /// wait" are told apart by the recorded times.
    static let after: TimeInterval = 6

    @Test("three first-tier contacts and one second-tier: nobody answers → one threaded escalation each, the second tier's alert, the signed checkin.escalated, then unheard (crit, notifier.unheard); acknowledged or checked in → no escalation; all three bounced → escalation at once")
    func scenario() throws {
        typealias Scenario = EscalationDeliveryIntegrationTests
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let env = try NotifierProcess.environment(database: db, [
            "INTRODUCE_CONTACTS": "off", "ESCALATE_AFTER": "\(Int(Self.after))s", "ALL_CLEAR_POLL_SECONDS": "1",
            "WEBHOOK_URL": receiver.plainURL, "WEBHOOK_SECRET": secret, "WEBHOOK_EVENTS": "checkin.escalated,notifier.unheard",
        ])
        let day = Scenario.today
        let silent = try Scenario.missing(db, mail, [("a", 1), ("b", 1), ("c", 1), ("n", 2)], name: "无人应", day: day)
        let heard = try Scenario.missing(db, mail, [("d", 1), ("dn", 2)], name: "有人去", day: day)
        let back = try Scenario.missing(db, mail, [("e", 1), ("en", 2)], name: "回来了", day: day)
        let dead = try Scenario.missing(db, mail, [("f", 1), ("g", 1), ("h", 1), ("hn", 2)], name: "全退信", day: day)
        let run = try NotifierProcess.run(["--run-now", "--date", day.description], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        let alerts = try mail.deliveries()
        #expect(alerts.map(\.recipient).sorted() == ["a", "b", "c", "d", "e", "f", "g", "h"].map(mail.address).sorted(),
                "the first alert: the first tier only")

        // Before ESCALATE_AFTER: d presses "I'm on it" (the page's store), the third user checks
        // in, and the fourth user's three alerts bounce (the bounce reader's store).
        #expect(try AcknowledgementStore().record(db.connection, userID: heard, alertDate: day, contact: mail.address("d")))
        try db.checkIn(back, day.description)
        for (index, local) in ["f", "g", "h"].enumerated() {
            let id = try #require(try db.query("""
                SELECT id::text FROM notification_logs WHERE user_id = $1 AND kind = 'alert' AND contact = $2
                """, [dead, mail.address(local)]).first?[0].flatMap { Int64($0) })
            let event = BounceStore.Event(report: "report-\(index)", kind: .permanent, domain: mail.domain, logID: id, status: "5.1.1",
                                          diagnostic: "smtp; 550 5.1.1 mailbox unavailable")
            #expect(try BounceStore.applyPermanent(db.connection, event).bounced)
        }

        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        func stage(_ user: String) throws -> String? { try db.query("SELECT stage FROM sileme.escalations WHERE user_id = $1", [user]).first?[0] ?? nil }
        func events(_ type: String, _ user: String) throws -> [WebhookReceiver.Record] {
            try receiver.received().filter { $0.body.contains("\"type\":\"\(type)\"") && $0.body.contains(user) }
        }
        let unheard = DaemonIntegrationTests.eventually(4 * Self.after + 20) {
            (try? stage(silent)) == "unheard" && ((try? events("notifier.unheard", silent).count) ?? 0) >= 1
        }
        Thread.sleep(forTimeInterval: 2)  // a few more passes: nothing more may come
        kill(daemon.0.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(unheard, "\(result.stderr.suffix(2000))")
        #expect(result.status == 0)

        // The silent user: one escalation notice to each first-tier contact, threaded under its
        // own alert; the neighbour's first alert, dated as the streak's; nothing more.
        let later = Array(try mail.deliveries().dropFirst(alerts.count))
        let silentMails = later.filter { ["a", "b", "c", "n"].map(mail.address).contains($0.recipient) }
        #expect(silentMails.map(\.recipient).sorted() == ["a", "b", "c", "n"].map(mail.address), "\(later.map(\.recipient))")
        for notice in silentMails where notice.recipient != mail.address("n") {
            let alertID = try #require(try db.query("""
                SELECT message_id FROM notification_logs WHERE user_id = $1 AND kind = 'alert' AND contact = $2
                """, [silent, notice.recipient]).first?[0] ?? nil)
            #expect(String(decoding: notice.raw, as: UTF8.self).contains("\r\nIn-Reply-To: <\(alertID)>\r\n"))
        }
        #expect(try db.query("""
            SELECT kind, contact, notification_date::text, status FROM notification_logs
            WHERE user_id = $1 AND channel = 'email' ORDER BY kind, contact
            """, [silent]) == [["a", "b", "c", "n"].map { ["alert", mail.address($0), day.description, "sent"] },
                               ["a", "b", "c"].map { ["escalation", mail.address($0), day.description, "sent"] }].flatMap { $0 })
        let times = try #require(try db.query("""
            SELECT extract(epoch FROM escalated_at - first_sent_at)::float8::text, extract(epoch FROM unheard_at - escalated_at)::float8::text
            FROM sileme.escalations WHERE user_id = $1
            """, [silent]).first)
        #expect((Double(times[0] ?? "") ?? 0) >= Self.after && (Double(times[1] ?? "") ?? 0) >= Self.after, "\(times)")

        // Its webhook events, once each, signed; checkin.escalated lists every contact's state.
        let escalated = try events("checkin.escalated", silent)
        #expect(escalated.count == 1 && escalated.allSatisfy(\.signature_ok), "\(escalated.map(\.body))")
        let body = try #require(escalated.first?.body)
        for (position, local, tier, alerted) in [(1, "a", 1, true), (2, "b", 1, true), (3, "c", 1, true), (4, "n", 2, false)] {
            #expect(body.contains("{\"email\":\"\(mail.address(local))\",\"position\":\(position),\"language\":\"zh-Hans\",\"tier\":\(tier),\"alerted\":\(alerted),\"bounced\":false}"),
                    "\(body)")
        }
        #expect(try events("notifier.unheard", silent).count == 1)
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: result, minimum: 2)
            let crit = entries.filter { $0["NOTIFIER_EVENT"] == "unheard" && $0["USER_ID"] == silent }
            #expect(crit.count == 1 && crit.first?["PRIORITY"] == "2", "\(crit)")
        }

        // Acknowledged, or checked in: heard, never escalated; the second tier never alerted.
        #expect(try stage(heard) == "heard" && stage(back) == "heard")
        #expect(try events("checkin.escalated", heard).isEmpty && events("checkin.escalated", back).isEmpty)
        #expect(later.filter { $0.recipient == mail.address("e") }.count == 1, "the all-clear")
        #expect(!later.contains { ["dn", "en"].map(mail.address).contains($0.recipient) }, "the second tier of a heard streak is never told")
        #expect(!later.contains { $0.recipient == mail.address("d") }, "no escalation to who is going")

        // Every first-tier alert bounced: escalated at once — well before ESCALATE_AFTER — the
        // neighbour alerted, nobody sent a notice; the event says who bounced.
        let deadTimes = try #require(try db.query("""
            SELECT extract(epoch FROM escalated_at - first_sent_at)::float8::text FROM sileme.escalations WHERE user_id = $1
            """, [dead]).first)
        #expect((Double(deadTimes[0] ?? "") ?? .infinity) < Self.after, "\(deadTimes)")
        #expect(later.filter { ["f", "g", "h", "hn"].map(mail.address).contains($0.recipient) }.map(\.recipient) == [mail.address("hn")])
        let deadEvent = try #require(try events("checkin.escalated", dead).first?.body)
        #expect(deadEvent.contains("\"email\":\"\(mail.address("g"))\",\"position\":2,\"language\":\"zh-Hans\",\"tier\":1,\"alerted\":true,\"bounced\":true}"), "\(deadEvent)")
        #expect(try events("checkin.escalated", dead).count == 1)
    }

    @Test("two daemons on one database, one SIGKILLed while it sends the escalation step of 150 streaks: each notice, second-tier alert and checkin.escalated exactly once per streak and contact, but the mails accepted and not recorded at the kill (at most two per connection, resent with the same Message-ID); nothing lost")
    func twoDaemonsAndAKill() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let day = EscalationDeliveryIntegrationTests.today
        let streaks = 150
        // Each user: one first-tier contact (a-N) and one of the second tier (n-N).
        try db.addUsers(count: streaks, domain: mail.domain, lastCheckIn: day.adding(days: -3).description)
        try db.query("""
            INSERT INTO emergency_contacts (user_id, email, position, tier)
            SELECT u.id, c.local || '-' || split_part(u.emergency_email, '@', 1) || '@' || $1, c.position, c.tier
            FROM users u CROSS JOIN (VALUES ('a', 1, 1), ('n', 2, 2)) AS c(local, position, tier)
            """, [mail.domain])
        // Slow enough (two connections, 40 mails a second) that the kill lands mid-step. The
        // daemon claims on the sessions it keeps, which hold a lease: a short one, so that the
        // killed daemon's claims are taken over within the test.
        let env = try NotifierProcess.environment(database: db, [
            "INTRODUCE_CONTACTS": "off", "ESCALATE_AFTER": "1h", "ALL_CLEAR_POLL_SECONDS": "1",
            "SMTP_CONNECTIONS": "2", "SMTP_RATE_LIMIT": "40", "CLAIM_LEASE_SECONDS": "4",
            "WEBHOOK_URL": receiver.plainURL, "WEBHOOK_SECRET": secret, "WEBHOOK_EVENTS": "checkin.escalated",
        ])
        var fast = env
        fast["SMTP_RATE_LIMIT"] = nil
        let run = try NotifierProcess.run(["--run-now", "--date", day.description], environment: fast)
        #expect(run.status == 0, "\(run.stderr.suffix(1500))")
        let alerts = try mail.deliveries().count
        #expect(alerts == streaks, "the first tier only")
        // Every streak an hour old: the escalation is due for all of them at the daemons' first pass.
        try db.query("UPDATE sileme.escalations SET first_sent_at = first_sent_at - interval '1 hour', clock_at = clock_at - interval '1 hour'")

        let first = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        var second: (Process, Pipe, Pipe)?
        defer {
            for daemon in [first, second].compactMap({ $0 }) where daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) }
        }
        // The first daemon has made the step and is sending what it owes: the second starts, and
        // the first is killed a moment later, mid-send.
        #expect(try DaemonIntegrationTests.eventually(60) { try mail.deliveries().count >= alerts + 30 })
        var other = env
        other["NOTIFY_TIME"] = DaemonIntegrationTests.localTime(offset: 3 * 3600).time
        second = try NotifierProcess.start([], environment: other)
        Thread.sleep(forTimeInterval: 0.7)
        kill(first.0.processIdentifier, SIGKILL)
        let killed = NotifierProcess.finish(first.0, first.1, first.2)
        let atKill = try mail.deliveries().count - alerts

        let done = try DaemonIntegrationTests.eventually(90) {
            try db.query("""
                SELECT count(*) FILTER (WHERE kind = 'escalation' AND channel = 'email' AND email_sent),
                       count(*) FILTER (WHERE kind = 'alert' AND channel = 'email' AND email_sent),
                       count(*) FILTER (WHERE kind = 'escalation' AND channel = 'webhook' AND email_sent)
                FROM notification_logs
                """).first == ["\(streaks)", "\(2 * streaks)", "\(streaks)"]
        }
        Thread.sleep(forTimeInterval: 2)  // a few more passes: nothing more may come
        let survivor = try #require(second)
        kill(survivor.0.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(survivor.0, survivor.1, survivor.2)
        #expect(done, "\(result.stderr.suffix(2000))\n--- killed:\n\(killed.stderr.suffix(1500))")
        #expect(result.status == 0)
        #expect(atKill > 0 && atKill < 2 * streaks, "killed mid-step: \(atKill) of \(2 * streaks) mails sent")
        #expect(try db.query("SELECT count(*) FROM sileme.escalations WHERE stage = 'escalated'").first == ["\(streaks)"])

        // Exactly one row of each per streak and contact, each sent.
        #expect(try db.query("""
            SELECT kind, channel, count(*), count(DISTINCT (user_id, contact)), count(*) FILTER (WHERE status = 'sent')
            FROM notification_logs GROUP BY kind, channel ORDER BY kind, channel
            """) == [["alert", "email", "\(2 * streaks)", "\(2 * streaks)", "\(2 * streaks)"],
                     ["escalation", "email", "\(streaks)", "\(streaks)", "\(streaks)"],
                     ["escalation", "webhook", "\(streaks)", "\(streaks)", "\(streaks)"]])
        // The mails: one notice to each a-N and one alert to each n-N after the first alerts; a
        // copy only of a mail accepted and not recorded at the kill, with the same Message-ID.
        let later = Array(try mail.deliveries().dropFirst(alerts))
        let byRecipient = Dictionary(grouping: later, by: \.recipient)
        #expect(byRecipient.count == 2 * streaks, "nothing lost")
        #expect(byRecipient.keys.filter { $0.hasPrefix("a-") }.count == streaks && byRecipient.keys.filter { $0.hasPrefix("n-") }.count == streaks)
        for (recipient, copies) in byRecipient where copies.count > 1 {
            #expect(Set(copies.map(\.messageID)).count == 1, "\(recipient): resent with the same Message-ID")
        }
        // (The survivor sends meanwhile, so what was unrecorded at the kill cannot be read apart
        // from its own mails in flight: the copies are counted at the end instead.)
        let copies = later.count - byRecipient.count
        #expect(copies <= 4, "at most two accepted, unrecorded mails per SMTP connection of the killed daemon: \(copies)")
        // The events: one delivered per streak (a resend carries the same webhook-id).
        let events = try receiver.received().filter { $0.body.contains("\"type\":\"checkin.escalated\"") }
        #expect(events.allSatisfy { $0.signature_ok })
        let delivered = events.filter(\.delivered)
        #expect(delivered.count == streaks && Set(delivered.compactMap(\.id)).count == streaks)
        let users = Set(try db.query("SELECT id::text FROM users").compactMap { $0[0] })
        #expect(Set(users.filter { user in delivered.contains { $0.body.contains(user) } }).count == streaks, "one per streak")
        print("Escalation kill: \(atKill) of \(2 * streaks) escalation mails out at the kill, \(copies) resent; "
              + "\(events.count - streaks) webhook resends; lost 0")
    }
}
