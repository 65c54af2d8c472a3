import Foundation
import Store
import TestSupport
import Testing
import Values

/// The page's outcome buttons on real servers (docs/escalation.md): the daemon's real listener,
/// PostgreSQL, the SMTP sink and a webhook receiver. "They're OK" closes the streak — notices to
/// the others, no escalation, no follow-up, and the next streak alerts again; "I couldn't reach
/// them" brings the next step at once; a GET or a scanner's POST records nothing.
@Suite("The outcome buttons on real servers", .serialized, .enabled(if: TestEnvironment.enabled))
struct OutcomeIntegrationTests {
    typealias Ack = AcknowledgementIntegrationTests

    /// A user with three contacts alerted on `alertDate` by a real run, with the daemon serving the
    /// page on a port of its own: the user, the contacts, each contact's link, the daemon.
    struct Alerted {
        let user: String
        let contacts: [String]
        let links: [String: String]
        let alerts: [Mailbox.Delivery]
    }

    static func alert(_ db: TestDatabase, _ mail: Mailbox, name: String, locals: [String], lastCheckIn: CalendarDate,
                      alertDate: CalendarDate, base: String, env: [String: String]) throws -> Alerted {
        let user = try db.addUser(name: name, email: mail.address("\(locals[0])-fallback"), checkIns: [lastCheckIn.description])
        let contacts = locals.map(mail.address)
        try LifecycleIntegrationTests.addContacts(db, user, contacts)
        let before = try mail.deliveries().count
        let run = try NotifierProcess.run(["--run-now", "--date", alertDate.description], environment: env)
        #expect(run.status == 0, "\(run.stderr.suffix(800))")
        let alerts = Array(try mail.deliveries().dropFirst(before)).filter { contacts.contains($0.recipient) }
        #expect(alerts.map(\.recipient).sorted() == contacts.sorted())
        var links: [String: String] = [:]
        for alert in alerts { links[alert.recipient] = try Ack.link(in: alert, base: base) }
        return Alerted(user: user, contacts: contacts, links: links, alerts: alerts)
    }

    /// Presses "I'm on it" on `link`'s page (a person's two taps: the answer, then Send).
    static func pressOnIt(_ link: String) throws {
        let page = try Ack.http(link)
        #expect(try Ack.http(link, post: "form=\(try Ack.formField(page.body))&going=yes").status == 303)
    }

    static func outcome(_ db: TestDatabase, _ user: String) throws -> [String?] {
        try db.query("SELECT stage, outcome, outcome_contact FROM sileme.escalations WHERE user_id = $1 ORDER BY alert_date", [user])
            .first ?? []
    }

    @Test("\"They're OK\": a GET and a scanner's POST record nothing; a person's answer closes the streak — one threaded notice to each other contact, the signed checkin.outcome, no escalation after ESCALATE_AFTER, no follow-up; a second answer changes nothing; after a check-in the next streak alerts again")
    func theyAreOK() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let hookSecret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: hookSecret)
        defer { receiver.stop() }
        let today = Ack.today
        let alertDate = today.adding(days: -5)
        let port = try PostgresCluster.freePort()
        let base = "http://127.0.0.1:\(port)/ack"
        let env = try NotifierProcess.environment(database: db, [
            "ACK_BASE_URL": base, "ACK_SECRET": Ack.secret, "ACK_LISTEN": "127.0.0.1:\(port)", "FOLLOW_UP_DAYS": "1",
            "ESCALATE_AFTER": "12s", "WEBHOOK_URL": receiver.plainURL, "WEBHOOK_SECRET": hookSecret,
            "WEBHOOK_EVENTS": "checkin.outcome,checkin.escalated", "INTRODUCE_CONTACTS": "off", "ALL_CLEAR_POLL_SECONDS": "1",
        ])
        let alerted = try Self.alert(db, mail, name: "张三", locals: ["daughter", "neighbour", "friend"],
                                     lastCheckIn: today.adding(days: -8), alertDate: alertDate, base: base, env: env)
        let escalateAt = Date().addingTimeInterval(12)
        let (user, contacts) = (alerted.user, alerted.contacts)
        let daughter = try #require(alerted.links[contacts[0]]), friend = try #require(alerted.links[contacts[2]])
        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Ack.http("http://127.0.0.1:\(port)/healthz").status) == 200 })

        // Before "I'm on it" there is no outcome to give; after it, the page asks how it ended.
        #expect(try !Ack.http(daughter).body.contains("name=\"outcome\""))
        try Self.pressOnIt(daughter)
        let page = try Ack.http(daughter)
        let field = try Ack.formField(page.body)
        #expect(page.body.contains("name=\"outcome\" value=\"ok\"") && page.body.contains("TA 一切安好"))

        // Nothing but a person's answer records anything: a GET (even with the answer in the
        // query), a POST without the page's field, the form as found, the harmless answer.
        #expect(try Ack.http(daughter + "?outcome=ok").status == 200)
        #expect(try Ack.http(daughter, post: "outcome=ok").status == 403)
        #expect(try Ack.http(daughter, post: "").status == 403)
        #expect(try Ack.http(daughter, post: "form=forged&outcome=ok").status == 403)
        #expect(try Ack.http(daughter, post: "form=\(field)&outcome=ok", headers: ["Origin: https://evil.example"]).status == 403)
        let asFound = try Ack.http(daughter, post: "form=\(field)&outcome=")
        #expect(asFound.status == 422 && asFound.body.contains("class=\"note\""))
        let noNews = try Ack.http(daughter, post: "form=\(field)&outcome=none")
        #expect(noNews.status == 200 && noNews.body.contains("没有记录任何内容"))
        #expect(try Self.outcome(db, user) == ["alerted", nil, nil], "nothing recorded yet")
        // The friend did not say "I'm on it": their answer records nothing.
        let friendsField = try Ack.formField(try Ack.http(friend).body)
        #expect(try Ack.http(friend, post: "form=\(friendsField)&outcome=unreachable").status == 303)
        #expect(try Self.outcome(db, user) == ["alerted", nil, nil])

        // The daughter's answer: recorded, the streak closed.
        #expect(try Ack.http(daughter, post: "form=\(field)&outcome=ok").status == 303)
        #expect(try Self.outcome(db, user) == ["closed", "ok", contacts[0]])
        // A second answer, by her or anyone, changes nothing; the page shows what was said.
        #expect(try Ack.http(daughter, post: "form=\(field)&outcome=unreachable").status == 303)
        #expect(try Ack.http(friend, post: "form=\(friendsField)&going=yes").status == 303)
        #expect(try Self.outcome(db, user) == ["closed", "ok", contacts[0]])
        #expect(try db.query("SELECT contact FROM sileme.acknowledgements WHERE user_id = $1", [user]) == [[contacts[0]]],
                "nobody says \"I'm on it\" once they're OK")
        #expect(try Ack.http(daughter).body.contains("告知：TA 一切安好") && !(try Ack.http(daughter).body.contains("<form")))
        let friendsPage = try Ack.http(friend, language: "en")
        #expect(friendsPage.body.contains("\(EmailMasking.mask(contacts[0])) said at") && !friendsPage.body.contains("<form"))

        // The neighbour and the friend: the acknowledged notice, then one outcome_ok notice each,
        // threaded under their own alert; the daughter none.
        #expect(try DaemonIntegrationTests.eventually(30) {
            try db.query("SELECT count(*)::text FROM notification_logs WHERE user_id = $1 AND kind = 'outcome_ok' AND status = 'sent'",
                         [user])[0][0] == "3"
        }, "two notices and the event")
        let notices = try mail.deliveries().filter { (try? MailParser.parse($0.raw).text?.contains("确认：TA 一切安好")) == true }
        #expect(notices.map(\.recipient).sorted() == [contacts[1], contacts[2]].sorted(), "each other contact once")
        for notice in notices {
            let parsed = try MailParser.parse(notice.raw)
            let alertID = try #require(alerted.alerts.first { $0.recipient == notice.recipient }?.messageID)
            #expect(parsed.headers["In-Reply-To"]?.first?.contains(alertID) == true)
            #expect(parsed.text?.contains(EmailMasking.mask(contacts[0])) == true && parsed.text?.contains(contacts[0]) == false)
        }
        #expect(try DaemonIntegrationTests.eventually(20) { try receiver.received().contains { $0.body.contains("checkin.outcome") } })
        let events = try receiver.received().filter { $0.body.contains("\"checkin.outcome\"") }
        #expect(events.count == 1 && events.allSatisfy(\.verified))
        let body = events.first?.body ?? ""
        #expect(body.contains("\"user_id\":\"\(user)\"") && body.contains("\"alert_date\":\"\(alertDate)\"")
                && body.contains("\"outcome\":\"ok\"") && body.contains("\"outcome_by\":\"\(EmailMasking.mask(contacts[0]))\"")
                && body.contains("\"outcome_at\":"), "\(body)")

        // ESCALATE_AFTER passes: no escalation (the pass runs every second), the streak stays closed.
        Thread.sleep(forTimeInterval: max(0, escalateAt.timeIntervalSinceNow) + 3)
        #expect(try Self.outcome(db, user) == ["closed", "ok", contacts[0]])
        #expect(try db.query("SELECT count(*)::text FROM notification_logs WHERE user_id = $1 AND kind = 'escalation'", [user])[0][0] == "0")
        #expect(!(try receiver.received().contains { $0.body.contains("checkin.escalated") }))
        // The follow-up (FOLLOW_UP_DAYS=1) falls due the next day: not sent.
        let followUp = try NotifierProcess.run(["--run-now", "--date", alertDate.adding(days: 1).description], environment: env)
        #expect(followUp.status == 0, "\(followUp.stderr.suffix(800))")
        #expect(try db.query("SELECT count(*)::text FROM notification_logs WHERE user_id = $1 AND kind = 'follow_up'", [user])[0][0] == "0")
        let mailsBefore = try mail.deliveries().count
        #expect(mailsBefore == 3 + 2 + 2, "the alerts, the acknowledged and the outcome notices: nothing more")

        // A check-in ends the streak (every contact gets the all-clear); two days missed after it
        // start a new streak, which alerts again.
        try db.checkIn(user, alertDate.adding(days: 1).description)
        #expect(try DaemonIntegrationTests.eventually(30) {
            try db.query("SELECT count(*)::text FROM notification_logs WHERE user_id = $1 AND kind = 'all_clear' AND status = 'sent'",
                         [user])[0][0] == "3"
        }, "the all-clears")
        let next = alertDate.adding(days: 4)
        let again = try NotifierProcess.run(["--run-now", "--date", next.description], environment: env)
        #expect(again.status == 0, "\(again.stderr.suffix(800))")
        #expect(try db.query("""
            SELECT contact FROM notification_logs WHERE user_id = $1 AND kind = 'alert' AND notification_date = $2 AND status = 'sent' ORDER BY contact
            """, [user, next.description]).map { $0[0] } == contacts.sorted().map { Optional($0) })
        #expect(try db.query("SELECT alert_date::text, stage FROM sileme.escalations WHERE user_id = $1 ORDER BY alert_date", [user])
                == [[alertDate.description, "closed"], [next.description, "alerted"]])
        kill(daemon.0.processIdentifier, SIGTERM)
        let stopped = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(stopped.status == 0)
        if TestEnvironment.current?.journal == true {
            let recorded = try JournalReader.entries(of: stopped, minimum: 2).filter { $0["NOTIFIER_EVENT"] == "outcome_recorded" }
            #expect(recorded.count == 1 && recorded.first?["OUTCOME"] == "ok" && recorded.first?["RECIPIENT"] == EmailMasking.mask(contacts[0]),
                    "\(recorded)")
        }
    }

    @Test("\"I couldn't reach them\": the others (not a bounced one) are told and the next step comes at once — the escalation (not to who said it) when not yet escalated, unheard when already")
    func couldNotReach() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let hookSecret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: hookSecret)
        defer { receiver.stop() }
        let today = Ack.today
        let alertDate = today.adding(days: -1)
        let port = try PostgresCluster.freePort()
        let base = "http://127.0.0.1:\(port)/ack"
        let env = try NotifierProcess.environment(database: db, [
            "ACK_BASE_URL": base, "ACK_SECRET": Ack.secret, "ACK_LISTEN": "127.0.0.1:\(port)", "ESCALATE_AFTER": "1h",
            "WEBHOOK_URL": receiver.plainURL, "WEBHOOK_SECRET": hookSecret, "WEBHOOK_EVENTS": "checkin.outcome,checkin.escalated,notifier.unheard",
            "INTRODUCE_CONTACTS": "off", "ALL_CLEAR_POLL_SECONDS": "3600",
        ])
        let fresh = try Self.alert(db, mail, name: "张三", locals: ["a1", "a2", "a3"], lastCheckIn: alertDate.adding(days: -3),
                                   alertDate: alertDate, base: base, env: env)
        let escalated = try Self.alert(db, mail, name: "李四", locals: ["b1", "b2", "b3"], lastCheckIn: alertDate.adding(days: -3),
                                       alertDate: alertDate, base: base, env: env)
        // The fresh streak's third contact bounced (docs/bounces.md): told nothing more.
        try db.query("UPDATE notification_logs SET status = 'bounced' WHERE user_id = $1 AND contact = $2",
                     [fresh.user, fresh.contacts[2]])
        // The second user's streak escalated already (an hour is long to wait in a test).
        #expect(try EscalationStore.escalate(db.connection, userID: escalated.user, alertDate: alertDate, at: Date()))
        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Ack.http("http://127.0.0.1:\(port)/healthz").status) == 200 })
        // At its start the daemon sends what the escalated streak owes: b2, b3 and b1 are told.
        #expect(try DaemonIntegrationTests.eventually(30) {
            try db.query("SELECT count(*)::text FROM notification_logs WHERE user_id = $1 AND kind = 'escalation' AND channel = 'email' AND status = 'sent'",
                         [escalated.user])[0][0] == "3"
        })

        for alerted in [fresh, escalated] {
            let link = try #require(alerted.links[alerted.contacts[0]])
            try Self.pressOnIt(link)
            let field = try Ack.formField(try Ack.http(link, language: "en").body)
            #expect(try Ack.http(link, post: "form=\(field)&outcome=unreachable", language: "en").status == 303)
            #expect(try Ack.http(link, language: "en").body.contains("You said at"))
        }
        // Each other contact not bounced: one outcome_unreachable notice. The fresh streak escalates
        // at once (its hour is far off), its notice to the one other left; the escalated one is unheard.
        #expect(try DaemonIntegrationTests.eventually(30) {
            try db.query("""
                SELECT count(*)::text FROM notification_logs WHERE kind = 'outcome_unreachable' AND channel = 'email' AND status = 'sent'
                """)[0][0] == "3"
        }, "the outcome notices")
        #expect(try DaemonIntegrationTests.eventually(30) {
            try db.query("SELECT stage FROM sileme.escalations WHERE user_id = $1", [fresh.user]) == [["escalated"]]
                && db.query("SELECT stage FROM sileme.escalations WHERE user_id = $1", [escalated.user]) == [["unheard"]]
        }, "the next step at once: \((try? db.query("SELECT user_id::text, stage FROM sileme.escalations")) ?? [])")
        #expect(try DaemonIntegrationTests.eventually(30) {
            try db.query("""
                SELECT contact FROM notification_logs WHERE user_id = $1 AND kind = 'escalation' AND channel = 'email' AND status = 'sent'
                ORDER BY contact
                """, [fresh.user]).map { $0[0] } == [fresh.contacts[1]]
        }, "the escalation, but not to who could not reach them, nor to the bounced address")
        for (alerted, others) in [(fresh, [fresh.contacts[1]]), (escalated, [escalated.contacts[1], escalated.contacts[2]].sorted())] {
            let told = try db.query("""
                SELECT contact FROM notification_logs WHERE user_id = $1 AND kind = 'outcome_unreachable' AND channel = 'email' ORDER BY contact
                """, [alerted.user]).map { $0[0] }
            #expect(told == others.map { Optional($0) })
        }
        let unreachable = try mail.deliveries().filter { (try? MailParser.parse($0.raw).text?.contains("没能联系上 TA")) == true }
        #expect(unreachable.count == 3)
        for notice in unreachable {
            let text = try #require(try MailParser.parse(notice.raw).text)
            #expect(text.contains(base + "/"), "the contact's own link, to say they are going: \(text)")
        }
        #expect(try DaemonIntegrationTests.eventually(20) {
            let bodies = try receiver.received().map(\.body)
            return bodies.filter { $0.contains("\"checkin.outcome\"") && $0.contains("\"outcome\":\"unreachable\"") }.count == 2
                && bodies.contains { $0.contains("\"checkin.escalated\"") && $0.contains(fresh.user) }
                && bodies.contains { $0.contains("\"notifier.unheard\"") && $0.contains(escalated.user) }
        }, "\((try? receiver.received().map(\.body)) ?? [])")
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
    }

    @Test("the page with the outcome buttons in headless Chromium: both languages, a phone and a desktop, one Send button under the strict CSP",
          .enabled(if: Chromium.available, "chromium is not installed (apt-get install chromium)"))
    func browser() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let alertDate = Ack.today.adding(days: -1)
        let port = try PostgresCluster.freePort()
        let base = "http://127.0.0.1:\(port)/ack"
        let env = try NotifierProcess.environment(database: db, [
            "ACK_BASE_URL": base, "ACK_SECRET": Ack.secret, "ACK_LISTEN": "127.0.0.1:\(port)", "INTRODUCE_CONTACTS": "off",
        ])
        let alerted = try Self.alert(db, mail, name: "张三", locals: ["daughter", "neighbour", "friend"],
                                     lastCheckIn: alertDate.adding(days: -3), alertDate: alertDate, base: base, env: env)
        let link = try #require(alerted.links[alerted.contacts[0]])
        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Ack.http("http://127.0.0.1:\(port)/healthz").status) == 200 })
        try Self.pressOnIt(link)

        // SILEME_SCREENSHOT_DIR=docs/screenshots keeps them (the ones docs/acknowledgement.md shows).
        let folder = ProcessInfo.processInfo.environment["SILEME_SCREENSHOT_DIR"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("sn-outcome-shots-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (language, name, answers) in [("zh-CN", "zh", ["还没有结果", "TA 一切安好", "我联系不上 TA"]),
                                          ("en-US", "en", ["No news yet", "re OK", "t reach them"])] {
            let switches = ["--accept-lang=\(language)", "--lang=\(language)"]
            for (width, height, viewport) in [(390, 844, "phone"), (1280, 800, "desktop")] {
                let png = "\(folder)/ack-outcome-\(name)-\(viewport).png"
                try Chromium.screenshot(url: link, to: png, width: width, height: height, extra: switches)
                let shot = try Screenshot(png: png)
                #expect(shot.width == width && shot.height == height)
                #expect(shot.color(2, 2) == "#f4f5f7", "\(png): background \(shot.color(2, 2))")
                // The three answers fill a phone's first screen; Send may be just below it.
                let buttons = shot.areas(of: "#1f6feb", minimum: 200)
                #expect(viewport == "phone" ? buttons.count <= 1 : buttons.count == 1, "\(png): one button, found \(buttons)")
                if let button = buttons.first, viewport == "phone" {
                    #expect(button.x1 - button.x0 > 300, "\(png): \(button)")
                }
            }
            let dom = try Chromium.dumpDOM(url: link, extra: switches)
            #expect(dom.contains("<form method=\"post\">") && dom.contains("name=\"form\"") && !dom.contains("<script"))
            #expect(dom.components(separatedBy: "name=\"outcome\"").count == 4 && !dom.contains("checked=") && !dom.contains(" checked>") && dom.contains("<button type=\"submit\">"))
            #expect(answers.allSatisfy { dom.contains($0) }, "\(answers)")
            #expect(!alerted.contacts.contains { dom.contains($0) }, "no full address")
        }
        #expect(try Self.outcome(db, alerted.user) == ["alerted", nil, nil], "the browser's visits recorded nothing")
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
    }
}
