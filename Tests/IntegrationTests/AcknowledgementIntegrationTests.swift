import Acknowledgement
import Foundation
import Store
import TestSupport
import Testing
import Values

/// "I'm on it" on real servers (docs/acknowledgement.md): the link in the mails, the
/// daemon's real listener, the `acknowledged` notices through the claim machinery, the follow-up
/// that is then not sent, the signed webhook event, bad tokens, two daemons, and the stop.
@Suite("The acknowledgement page on real servers", .serialized)
struct AcknowledgementIntegrationTests {
    static let secret = "test-ack-secret-0123456789abcdef0123456789"

    /// One HTTP exchange with curl: status, body, headers (lower-cased names).
    struct Exchange {
        let status: Int
        let body: String
        let headers: [String: String]
    }

    static func http(_ url: String, post form: String? = nil, language: String = "zh-CN,zh;q=0.9",
                     headers extra: [String] = [], curl options: [String] = []) throws -> Exchange {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sn-ack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = folder.appendingPathComponent("body").path, head = folder.appendingPathComponent("head").path
        var arguments = ["-s", "-o", body, "-D", head, "-w", "%{http_code}", "-m", "10", "-H", "Accept-Language: \(language)"]
        if let form { arguments += ["--data-raw", form] }
        for header in extra { arguments += ["-H", header] }
        arguments += options
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments + [url]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let code = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var headers: [String: String] = [:]
        for line in (try? String(contentsOfFile: head, encoding: .utf8))?.split(separator: "\r\n") ?? [] {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Exchange(status: Int(code) ?? 0, body: (try? String(contentsOfFile: body, encoding: .utf8)) ?? "", headers: headers)
    }

    /// The acknowledgement link in a delivered mail's plain text.
    static func link(in delivery: Mailbox.Delivery, base: String) throws -> String {
        let text = try #require(try MailParser.parse(delivery.raw).text)
        let line = try #require(text.split(whereSeparator: \.isNewline).first { $0.hasPrefix(base) })
        return String(line)
    }

    /// The anti-forgery field of a page.
    static func formField(_ page: String) throws -> String {
        let marker = "name=\"form\" value=\""
        let start = try #require(page.range(of: marker)).upperBound
        return String(page[start...].prefix { $0 != "\"" })
    }

    /// The service zone's today.
    static var today: CalendarDate { CalendarDate(Date(), in: TimeZone(identifier: "Asia/Shanghai")!) }

    @Test("three contacts alerted; one opens the link (nothing recorded) and presses: the two others get one threaded notice each from two daemons, no follow-up, a signed webhook event; again changes nothing; bad tokens get the neutral page; SIGTERM with a request open stops within 2 s")
    func acknowledgeEndToEnd() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let hookSecret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: hookSecret)
        defer { receiver.stop() }
        let alertDate = Self.today.adding(days: -1)
        let user = try db.addUser(name: "张三", email: mail.address("fallback"), checkIns: [alertDate.adding(days: -3).description])
        let contacts = [mail.address("daughter"), mail.address("neighbour"), mail.address("friend")]
        try LifecycleIntegrationTests.addContacts(db, user, contacts)
        let ports = [try PostgresCluster.freePort(), try PostgresCluster.freePort()]
        let base = "http://127.0.0.1:\(ports[0])/ack"
        var env = try NotifierProcess.environment(database: db, [
            "ACK_BASE_URL": base, "ACK_SECRET": Self.secret, "FOLLOW_UP_DAYS": "1",
            "WEBHOOK_URL": receiver.plainURL, "WEBHOOK_SECRET": hookSecret,
            "WEBHOOK_EVENTS": "checkin.acknowledged", "INTRODUCE_CONTACTS": "off", "ALL_CLEAR_POLL_SECONDS": "3600",
        ])
        let alerts = try NotifierProcess.run(["--run-now", "--date", alertDate.description], environment: env)
        #expect(alerts.status == 0, "\(alerts.stderr.suffix(800))")
        let sent = try mail.deliveries()
        #expect(sent.map(\.recipient).sorted() == contacts.sorted())
        let daughter = try #require(sent.first { $0.recipient == contacts[0] })
        let link = try Self.link(in: daughter, base: base)
        let links = try sent.map { try Self.link(in: $0, base: base) }
        #expect(Set(links).count == 3, "one link per contact")

        // Two daemons serve the page (one port each); the daily runs are hours away.
        var daemons: [(Process, Pipe, Pipe)] = []
        for port in ports {
            env["ACK_LISTEN"] = "127.0.0.1:\(port)"
            daemons.append(try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env))
        }
        defer { for daemon in daemons where daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        for port in ports {
            #expect(DaemonIntegrationTests.eventually(20) { (try? Self.http("http://127.0.0.1:\(port)/healthz").status) == 200 },
                    "the listener on \(port) answers")
        }

        // GET: the page; nothing recorded.
        let page = try Self.http(link)
        #expect(page.status == 200)
        #expect(page.body.contains("张三") && page.body.contains("我去看看") && !page.body.contains("<script"))
        #expect(!contacts.contains { page.body.contains($0) }, "never a full address on the page")
        #expect(page.body.contains(EmailMasking.mask(contacts[1])))
        #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(page.headers["content-security-policy"]?.contains("unsafe-inline") == false)
        let english = try Self.http(link, language: "en-GB,en;q=0.9,zh;q=0.1")
        #expect(english.body.contains("m on it</label>") && english.headers["content-language"] == "en")
        #expect(try db.query("SELECT count(*)::text FROM sileme.acknowledgements")[0][0] == "0", "a GET records nothing")

        // POST without the page's field: refused, nothing recorded.
        #expect(try Self.http(link, post: "form=forged").status == 403)
        #expect(try Self.http(link, post: "").status == 403)
        #expect(try db.query("SELECT count(*)::text FROM sileme.acknowledgements")[0][0] == "0")

        // POST with it, on the second daemon's port: recorded once, 303 back to the page.
        let secondLink = link.replacingOccurrences(of: ":\(ports[0])/", with: ":\(ports[1])/")
        let pressed = try Self.http(secondLink, post: "form=\(try Self.formField(page.body))&going=yes")
        #expect(pressed.status == 303 && pressed.headers["location"] == String(link.split(separator: "/").last!))
        #expect(try db.query("SELECT contact FROM sileme.acknowledgements WHERE user_id = $1", [user]).map { $0[0] } == [contacts[0]])

        // The two others get one notice each, threaded under their own alert; the daughter none.
        #expect(try DaemonIntegrationTests.eventually(30) {
            try mail.deliveries().filter { $0.messageID != nil }.count >= 5
        }, "two acknowledged notices")
        #expect(try DaemonIntegrationTests.eventually(30) { try receiver.received().contains { $0.body.contains("checkin.acknowledged") } })
        Thread.sleep(forTimeInterval: 2)  // what a second sender would add, if anything
        let notices = try mail.deliveries().filter { delivery in !sent.contains { $0.messageID == delivery.messageID } }
        #expect(notices.map(\.recipient).sorted() == [contacts[1], contacts[2]].sorted(), "each other contact once")
        for notice in notices {
            let parsed = try MailParser.parse(notice.raw)
            let alert = try #require(sent.first { $0.recipient == notice.recipient }?.messageID)
            #expect(parsed.headers["In-Reply-To"]?.first?.contains(alert) == true)
            #expect(parsed.headers["References"]?.first?.contains(alert) == true)
            #expect(parsed.text?.contains(EmailMasking.mask(contacts[0])) == true)
            #expect(parsed.text?.contains(contacts[0]) == false)
        }
        let rows = try db.query("""
            SELECT contact, status, attempts::text FROM notification_logs
            WHERE user_id = $1 AND kind = 'acknowledged' AND channel = 'email' ORDER BY contact
            """, [user])
        #expect(rows.map { [$0[0], $0[1]] } == [[contacts[2], "sent"], [contacts[1], "sent"]].sorted { $0[0]! < $1[0]! })
        let events = try receiver.received().filter { $0.body.contains("checkin.acknowledged") }
        #expect(events.count == 1 && events.allSatisfy(\.verified), "one signed event: \(events.map(\.verify_error))")
        #expect(events.first?.body.contains("\"acknowledged_at\"") == true)

        // The page now says so (and asks how it ended: docs/escalation.md); pressing again changes nothing.
        let after = try Self.http(link)
        #expect(after.body.contains("谢谢") && !after.body.contains("name=\"going\"") && after.body.contains("name=\"outcome\""))
        #expect(try Self.http(link, post: "form=\(try Self.formField(page.body))&going=yes").status == 303)
        #expect(try db.query("SELECT count(*)::text FROM sileme.acknowledgements")[0][0] == "1")

        // `check` reports the listener and the count; the history report and the metrics file count it.
        var checking = env
        checking["ACK_LISTEN"] = "127.0.0.1:\(ports[0])"
        let check = try NotifierProcess.run(["check"], environment: checking)
        let checked = check.stdout + check.stderr
        #expect(checked.contains("ok   acknowledgement page: links to \(base)/…; ACK_LISTEN 127.0.0.1:\(ports[0]) (at most 256 connections): answers; "
                                 + "1 acknowledgement in the last 30 days"), "\(checked)")
        let report = try NotifierProcess.run(["report", "--from", alertDate.description, "--to", Self.today.description, "--format", "json"],
                                             environment: env)
        #expect(report.stdout.contains("\"acknowledgements\":1"), "\(report.stdout.prefix(600))")
        #expect(report.stdout.contains("{\"kind\":\"acknowledged\",\"channel\":\"email\",\"sent\":2"))
        let metrics = FileManager.default.temporaryDirectory.appendingPathComponent("sn-ack-\(UUID().uuidString).prom").path
        defer { try? FileManager.default.removeItem(atPath: metrics) }
        env["METRICS_FILE"] = metrics

        // The follow-up (FOLLOW_UP_DAYS=1) is due today — and not sent: a contact is on it.
        let followUps = try NotifierProcess.run(["--run-now", "--date", Self.today.description], environment: env)
        #expect(followUps.status == 0, "\(followUps.stderr.suffix(800))")
        #expect(try db.query("SELECT count(*)::text FROM notification_logs WHERE user_id = $1 AND kind = 'follow_up'", [user])[0][0] == "0")
        #expect(try mail.deliveries().count == 5, "no follow-up, no second notice")
        #expect((try? String(contentsOfFile: metrics, encoding: .utf8))?.contains("sileme_notifier_acknowledgements_total 1\n") == true)

        // Bad tokens: the same neutral page, 404 — forged, truncated, expired, another user's.
        let key = AckKey(secret: Secret(Self.secret))
        let token = String(link.split(separator: "/").last!)
        let genuine = try #require(key.verify(token, today: Self.today))
        let expired = key.sign(AckToken(userID: user, alertDate: alertDate, expiresOn: Self.today, contactTag: genuine.contactTag))
        let stranger = key.sign(AckToken(userID: UUID().uuidString, alertDate: alertDate, expiresOn: Self.today.adding(days: 9),
                                         contactTag: genuine.contactTag))
        let forged = String(token.dropLast()) + (token.last == "A" ? "B" : "A")
        let neutral = try Self.http("\(base)/\(forged)")
        #expect(neutral.status == 404 && !neutral.body.contains("张三"))
        for bad in [String(token.dropLast(5)), expired, stranger, "x", token + "A"] {
            let answer = try Self.http("\(base)/\(bad)")
            #expect(answer.status == 404 && answer.body == neutral.body, "\(bad)")
            #expect(try Self.http("\(base)/\(bad)", post: "form=\(key.formField(token: bad))").status == 404)
        }

        // SIGTERM while a request is open (headers never finished): each daemon stops within 2 s.
        let socket = try Self.openHalfRequest(port: ports[0])
        defer { close(socket) }
        for daemon in daemons {
            let started = Date()
            kill(daemon.0.processIdentifier, SIGTERM)
            let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
            let took = Date().timeIntervalSince(started)
            #expect(result.status == 0 && took < 2, "stopped in \(took) s: \(result.stderr.prefix(1500))")
            // The daemon that recorded it logged one journal event (the second port's).
            if daemon.0 === daemons[1].0, TestEnvironment.current?.journal == true {
                let entries = try JournalReader.entries(of: result, minimum: 2)
                let recorded = entries.filter { $0["NOTIFIER_EVENT"] == "acknowledgement_recorded" }
                #expect(recorded.count == 1 && recorded.first?["USER_ID"] == user
                        && recorded.first?["RECIPIENT"] == EmailMasking.mask(contacts[0]), "\(recorded)")
            }
        }
    }

    @Test("a page request per address beyond ACK_RATE_LIMIT gets 429; a huge body gets 413; a slow request is cut off")
    func limits() throws {
        let db = try TestDatabase()
        let port = try PostgresCluster.freePort()
        let env = try NotifierProcess.environment(database: db, [
            "ACK_LISTEN": "127.0.0.1:\(port)", "ACK_SECRET": Self.secret, "ACK_RATE_LIMIT": "5",
        ])
        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Self.http("http://127.0.0.1:\(port)/healthz").status) == 200 })
        let statuses = try (1...7).map { _ in try Self.http("http://127.0.0.1:\(port)/x").status }
        #expect(statuses == [404, 404, 404, 404, 404, 429, 429])
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)

        let other = try PostgresCluster.freePort()
        var env2 = env
        env2["ACK_LISTEN"] = "127.0.0.1:\(other)"
        env2["ACK_RATE_LIMIT"] = "100"
        let second = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env2)
        defer { if second.0.isRunning { kill(second.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Self.http("http://127.0.0.1:\(other)/healthz").status) == 200 })
        let huge = String(repeating: "a", count: 100_000)
        #expect(try Self.http("http://127.0.0.1:\(other)/x", post: "form=\(huge)").status == 413)
        // A request that never finishes its headers is cut off (idle 5 s), not held open.
        let slow = try Self.openHalfRequest(port: other)
        defer { close(slow) }
        var limit = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let started = Date()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var read = 1
        while read > 0 { read = recv(slow, &buffer, buffer.count, 0) }  // an error answer, if any, then the close
        let took = Date().timeIntervalSince(started)
        #expect(read == 0 && took < 12, "closed by the server: recv \(read) after \(took) s")
        kill(second.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(second.0, second.1, second.2).status == 0)
    }

    @Test("the page in a real browser (headless Chromium): its three languages on a phone and a desktop, styled under the strict CSP, the form without JavaScript",
          .enabled(if: Chromium.available, "chromium is not installed (apt-get install chromium)"))
    func browser() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let alertDate = Self.today.adding(days: -1)
        let user = try db.addUser(name: "张三", email: mail.address("fallback"), checkIns: [alertDate.adding(days: -3).description])
        let contacts = [mail.address("daughter"), mail.address("neighbour"), mail.address("friend")]
        try LifecycleIntegrationTests.addContacts(db, user, contacts)
        let port = try PostgresCluster.freePort()
        let base = "http://127.0.0.1:\(port)/ack"
        let env = try NotifierProcess.environment(database: db, [
            "ACK_BASE_URL": base, "ACK_SECRET": Self.secret, "ACK_LISTEN": "127.0.0.1:\(port)", "INTRODUCE_CONTACTS": "off",
        ])
        #expect(try NotifierProcess.run(["--run-now", "--date", alertDate.description], environment: env).status == 0)
        let sent = try mail.deliveries()
        let link = try Self.link(in: try #require(sent.first { $0.recipient == contacts[0] }), base: base)
        let friend = try Self.link(in: try #require(sent.first { $0.recipient == contacts[2] }), base: base)
        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Self.http("http://127.0.0.1:\(port)/healthz").status) == 200 })
        // The friend is already on it: the daughter's page shows it, and still offers the button.
        let friendsPage = try Self.http(friend)
        #expect(try Self.http(friend, post: "form=\(try Self.formField(friendsPage.body))&going=yes").status == 303)

        // SILEME_SCREENSHOT_DIR=docs/screenshots keeps them (the ones docs/acknowledgement.md shows).
        let folder = ProcessInfo.processInfo.environment["SILEME_SCREENSHOT_DIR"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("sn-ack-shots-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // No switch turns scripts off: headless Chromium's own screenshot and DOM dump need them.
        // The page needs none — it has no script, and its Content-Security-Policy (`default-src
        // 'none'`, no `script-src`) lets none run — so what the browser shows is the page without
        // JavaScript; its form's POST is the one the first test makes.
        for (language, name, button) in [("zh-CN", "zh", "我去看看"), ("zh-TW", "zh-Hant", "我去看看"), ("en-US", "en", "on it")] {
            let switches = ["--accept-lang=\(language)", "--lang=\(language)"]
            for (width, height, viewport) in [(390, 844, "phone"), (1280, 800, "desktop")] {
                let png = "\(folder)/ack-\(name)-\(viewport).png"
                try Chromium.screenshot(url: link, to: png, width: width, height: height, extra: switches)
                let shot = try Screenshot(png: png)
                #expect(shot.width == width && shot.height == height)
                // The style sheet applied under the CSP: the page's background, and the blue button
                // spanning the card (phone: nearly the whole width).
                #expect(shot.color(2, 2) == "#f4f5f7", "\(png): background \(shot.color(2, 2))")
                let buttons = shot.areas(of: "#1f6feb", minimum: 200)
                #expect(buttons.count == 1, "\(png): one button, found \(buttons)")
                if let button = buttons.first, viewport == "phone" {
                    #expect(button.x1 - button.x0 > 300 && button.y1 < height, "\(png): \(button)")
                }
            }
            // The browser builds the whole form from HTML alone: a POST to the page itself with the field.
            let dom = try Chromium.dumpDOM(url: link, extra: switches)
            #expect(dom.contains("<form method=\"post\">") && dom.contains("name=\"form\"") && dom.contains(button))
            #expect(!dom.contains("<script") && dom.contains("lang=\"\(["zh-CN": "zh-Hans", "zh-TW": "zh-Hant"][language] ?? "en")\""))
            #expect(!contacts.contains { dom.contains($0) }, "no full address")
        }
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
    }

    /// A TCP connection to the page on 127.0.0.1:`port` (the caller closes it).
    static func connectToPage(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("cannot connect to the page")
        }
        return fd
    }

    /// A connection to the page with half a request sent (the headers never end).
    static func openHalfRequest(port: Int) throws -> Int32 {
        let fd = try connectToPage(port: port)
        let partial = "GET /ack/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        _ = partial.withCString { send(fd, $0, strlen($0), 0) }
        return fd
    }
}
