import Foundation
import Store
import TestSupport
import Testing
import Values

/// The acknowledgement page under attack, on the daemon's real listener (docs/acknowledgement.md,
/// "Limits"): a connection flood never takes the alerting down, a link scanner cannot press the
/// button, a client rotating addresses locks nobody out, and HTTP/1.x's rules hold.
@Suite("The acknowledgement page hardened, on real servers", .serialized)
struct AckPageHardeningIntegrationTests {
    typealias Ack = AcknowledgementIntegrationTests

    static let flood = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Support/page_flood.py").path

    /// The unit's `LimitNOFILE=`.
    static var unitLimit: Int {
        let unit = (try? String(contentsOf: TestEnvironment.root.appendingPathComponent("systemd/sileme-notifier.service"), encoding: .utf8)) ?? ""
        let line = unit.split(separator: "\n").first { $0.hasPrefix("LimitNOFILE=") }
        return line.flatMap { Int($0.dropFirst("LimitNOFILE=".count)) } ?? 0
    }

    /// The daemon's open descriptors (its /proc/PID/fd).
    static func descriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    @Test("2,000 connections, half idle and half asking every second, at systemd's default limit (1,024) and at the unit's: the daemon lives, an alert due during the flood and a check-in's all-clears go out on time, the page serves again after",
          arguments: [1024, AckPageHardeningIntegrationTests.unitLimit])
    func flood(limit: Int) throws {
        #expect(Self.unitLimit >= 1024, "the unit sets LimitNOFILE=")
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fireAt = Date().addingTimeInterval(25)
        let fire = DaemonIntegrationTests.localTime(offset: 25)  // inside the flood
        let today = fire.date
        try DaemonIntegrationTests.completedRun(db, on: today.adding(days: -1))
        // Alerted yesterday, checks in during the flood: two all-clears.
        let back = try db.addUser(name: "李四", email: mail.address("unused"), checkIns: [today.adding(days: -4).description])
        try LifecycleIntegrationTests.addContacts(db, back, [mail.address("back.a"), mail.address("back.b")])
        // Due at the fire time, during the flood: two alerts.
        let due = try db.addUser(name: "张三", email: mail.address("unused2"), checkIns: [today.adding(days: -3).description])
        try LifecycleIntegrationTests.addContacts(db, due, [mail.address("due.a"), mail.address("due.b")])
        let port = try PostgresCluster.freePort()
        let env = try NotifierProcess.environment(database: db, [
            "ACK_LISTEN": "127.0.0.1:\(port)", "ACK_SECRET": Ack.secret, "ACK_BASE_URL": "http://127.0.0.1:\(port)/ack",
            "ALL_CLEAR_POLL_SECONDS": "2", "INTRODUCE_CONTACTS": "off", "NOTIFY_TIME": fire.time,
        ])
        #expect(try NotifierProcess.run(["--run-now", "--date", today.adding(days: -1).description], environment: env).status == 0)
        #expect(try mail.deliveries().map(\.recipient).sorted() == [mail.address("back.a"), mail.address("back.b")])

        let daemon = try NotifierProcess.start([], environment: env, wrapper: ["/usr/bin/prlimit", "--nofile=\(limit):\(limit)", "--"])
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Ack.http("http://127.0.0.1:\(port)/healthz").status) == 200 })

        let flooder = Process()
        flooder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        flooder.arguments = [Self.flood, String(port), "2000", "40"]
        let floodOut = Pipe()
        flooder.standardOutput = floodOut
        try flooder.run()
        defer { if flooder.isRunning { flooder.terminate() } }
        var peak = 0
        func watch(_ seconds: TimeInterval, until condition: () throws -> Bool) rethrows -> Bool {
            try DaemonIntegrationTests.eventually(seconds) {
                peak = max(peak, Self.descriptors(daemon.0.processIdentifier))
                return try condition()
            }
        }
        _ = watch(8) { false }  // the flood builds up
        try db.checkIn(back, today.description)
        let checkedIn = Date()
        #expect(try watch(30) { try mail.deliveries().count >= 4 }, "both all-clears during the flood")
        print("all-clears during the flood (limit \(limit)): \(String(format: "%.1f", Date().timeIntervalSince(checkedIn))) s after the check-in")
        #expect(try watch(40) { try mail.deliveries().count >= 6 }, "both alerts, due during the flood")
        let sent = try mail.deliveries()
        #expect(Set(sent.map(\.recipient)) == Set(["back.a", "back.b", "due.a", "due.b"].map { mail.address($0) }))
        #expect(sent.count == 6, "each once")
        let sentAt = try #require(try db.query("""
            SELECT extract(epoch FROM min(sent_at))::float8::text FROM notification_logs WHERE user_id = $1 AND kind = 'alert'
            """, [due]).first?.first ?? nil)
        let late = try #require(Double(sentAt)) - fireAt.timeIntervalSince1970
        #expect(late > -1.5 && late < 15, "the alert went out at its time: \(late) s after it")
        #expect(daemon.0.isRunning, "the daemon lives through the flood")
        flooder.waitUntilExit()
        let stats = String(decoding: floodOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        print("flood at limit \(limit): \(stats.trimmingCharacters(in: .whitespacesAndNewlines)); the daemon's descriptors at most \(peak); the alert \(String(format: "%.1f", late)) s after its time")
        #expect(stats.contains("\"closed_by_server\""), "the flooder ran: \(stats)")
        #expect(peak > 256 && peak < 256 + 64, "the page held its cap (256) and no more: \(peak) descriptors at the peak")
        #expect(daemon.0.isRunning)
        #expect(DaemonIntegrationTests.eventually(15) { (try? Ack.http("http://127.0.0.1:\(port)/healthz").status) == 200 },
                "the page serves again after the flood")
        kill(daemon.0.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(result.status == 0, "\(result.stderr.suffix(1500))")
        let logged = TestEnvironment.current?.journal == true
            ? try JournalReader.entries(of: result, minimum: 2).compactMap { $0["MESSAGE"] }.joined(separator: "\n")
            : result.stderr
        #expect(logged.contains("256 connections open (ACK_MAX_CONNECTIONS): new ones wait"), "the cap is logged")
    }
}

extension AckPageHardeningIntegrationTests {
    /// Sends `request` as it is on a new connection and reads until the server closes it (or 5 s
    /// pass): what came back, and whether the server closed the connection.
    static func raw(port: Int, _ request: String) throws -> (answer: String, closed: Bool) {
        let fd = try Ack.connectToPage(port: port)
        defer { close(fd) }
        var limit = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var answer = Data(), buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let read = recv(fd, &buffer, buffer.count, 0)
            if read > 0 { answer.append(contentsOf: buffer[0..<read]); continue }
            return (String(decoding: answer, as: UTF8.self), read == 0)
        }
    }

    /// The form a page holds, submitted as a program finds it: every field with its value as
    /// the HTML gives it, a radio button only where it is checked (as a browser's form
    /// submission, with nothing chosen).
    static func formAsFound(_ page: String) -> String {
        page.components(separatedBy: "<input").dropFirst().compactMap { tag -> String? in
            let tag = String(tag.prefix { $0 != ">" })
            func attribute(_ name: String) -> String? {
                guard let start = tag.range(of: "\(name)=\"")?.upperBound else { return nil }
                return String(tag[start...].prefix { $0 != "\"" })
            }
            if attribute("type") == "radio" && !tag.contains(" checked") { return nil }
            guard let name = attribute("name") else { return nil }
            let value = attribute("value") ?? ""
            return "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        }.joined(separator: "&")
    }

    @Test("a link scanner that loads the page and submits its form records nothing; neither does a foreign Origin or another site; a person's two taps do, once")
    func scanner() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let alertDate = Ack.today.adding(days: -1)
        let user = try db.addUser(name: "张三", email: mail.address("fallback"), checkIns: [alertDate.adding(days: -3).description])
        let contacts = [mail.address("daughter"), mail.address("neighbour")]
        try LifecycleIntegrationTests.addContacts(db, user, contacts)
        let port = try PostgresCluster.freePort()
        let base = "http://127.0.0.1:\(port)/ack"
        let env = try NotifierProcess.environment(database: db, [
            "ACK_BASE_URL": base, "ACK_SECRET": Ack.secret, "ACK_LISTEN": "127.0.0.1:\(port)", "INTRODUCE_CONTACTS": "off",
        ])
        #expect(try NotifierProcess.run(["--run-now", "--date", alertDate.description], environment: env).status == 0)
        let link = try Ack.link(in: try #require(try mail.deliveries().first { $0.recipient == contacts[0] }), base: base)
        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Ack.http("http://127.0.0.1:\(port)/healthz").status) == 200 })
        func recorded() throws -> String? { try db.query("SELECT count(*)::text FROM sileme.acknowledgements")[0][0] }

        // The scanner: GET, then the form as found (what Safe Links' detonation submits).
        let page = try Ack.http(link, language: "en")
        let asFound = Self.formAsFound(page.body)
        #expect(asFound.hasPrefix("form=") && !asFound.contains("going="), "\(asFound)")
        let scanned = try Ack.http(link, post: asFound, language: "en")
        #expect(scanned.status == 422 && scanned.body.contains("Please choose one"), "\(scanned.status)")
        // One that picks the first answer it finds says "I can't go now": nothing either.
        let first = try Ack.http(link, post: asFound + "&going=no", language: "en")
        #expect(first.status == 200 && first.body.contains("nothing was recorded"))
        #expect(try recorded() == "0", "no scanner records")

        // Another site's page: refused, whether or not the browser says where it comes from.
        let yes = asFound + "&going=yes"
        #expect(try Ack.http(link, post: yes, headers: ["Origin: https://evil.example"]).status == 403)
        #expect(try Ack.http(link, post: yes, headers: ["Origin: http://127.0.0.1:\(port + 1)"]).status == 403)
        #expect(try Ack.http(link, post: yes, headers: ["Sec-Fetch-Site: same-site"]).status == 403)
        #expect(try Ack.http(link, post: yes, headers: ["Sec-Fetch-Site: cross-site", "Origin: null"]).status == 403)
        #expect(try recorded() == "0")

        // A person: the page's own form with "I'm on it" chosen, as a browser sends it from a
        // no-referrer page (Origin: null) — recorded once; again changes nothing.
        let pressed = try Ack.http(link, post: yes, headers: ["Origin: null", "Sec-Fetch-Site: same-origin"])
        #expect(pressed.status == 303)
        #expect(try Ack.http(link, post: yes, headers: ["Origin: http://127.0.0.1:\(port)"]).status == 303)
        #expect(try recorded() == "1")
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
    }

    @Test("HTTP/1.x's rules: HTTP/1.0 answered as 1.0 and closed; no Host is 400; a declared huge body is 413 at once; /healthz has the security headers; 429 says Retry-After; an IPv6 /64 is one client")
    func protocolRules() throws {
        let db = try TestDatabase()
        let port = try PostgresCluster.freePort()
        let env = try NotifierProcess.environment(database: db, [
            "ACK_LISTEN": "127.0.0.1:\(port)", "ACK_SECRET": Ack.secret, "ACK_RATE_LIMIT": "5",
        ])
        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? Ack.http("http://127.0.0.1:\(port)/healthz").status) == 200 })

        let old = try Self.raw(port: port, "GET /healthz HTTP/1.0\r\n\r\n")
        #expect(old.answer.hasPrefix("HTTP/1.0 200") && old.answer.lowercased().contains("connection: close") && old.closed,
                "\(old.answer.prefix(300))")
        let hostless = try Self.raw(port: port, "GET /healthz HTTP/1.1\r\n\r\n")
        #expect(hostless.answer.hasPrefix("HTTP/1.1 400") && hostless.closed, "\(hostless.answer.prefix(300))")
        let started = Date()
        let huge = try Self.raw(port: port, "POST /ack/x HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000000\r\n\r\nform=")
        #expect(huge.answer.hasPrefix("HTTP/1.1 413") && huge.closed && Date().timeIntervalSince(started) < 3,
                "\(huge.answer.prefix(300)) after \(Date().timeIntervalSince(started)) s")
        let health = try Ack.http("http://127.0.0.1:\(port)/healthz")
        #expect(health.headers["content-security-policy"]?.hasPrefix("default-src 'none'") == true
                && health.headers["x-content-type-options"] == "nosniff" && health.headers["cache-control"] == "no-store")

        // Five requests a minute: one IPv6 client rotating within its /64 is one client.
        let statuses = try (1...6).map { n in
            try Ack.http("http://127.0.0.1:\(port)/ack/x", headers: ["X-Forwarded-For: 2001:db8:7:8::\(n)"]).status
        }
        #expect(statuses == [404, 404, 404, 404, 404, 429])
        let limited = try Ack.http("http://127.0.0.1:\(port)/ack/x", headers: ["X-Forwarded-For: 2001:db8:7:8:ffff::1"])
        #expect(limited.status == 429 && (Int(limited.headers["retry-after"] ?? "") ?? 0) >= 1
                && (Int(limited.headers["retry-after"] ?? "") ?? 99) <= 60, "\(limited.headers)")
        #expect(try Ack.http("http://127.0.0.1:\(port)/ack/x", headers: ["X-Forwarded-For: 2001:db8:7:9::1"]).status == 404,
                "the next /64 is another client")
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
    }

    @Test("a cap that does not leave 256 descriptors for the rest stops the start with exit 78, naming ACK_MAX_CONNECTIONS and what fits")
    func budgetAtStart() throws {
        let db = try TestDatabase()
        let port = try PostgresCluster.freePort()
        let env = try NotifierProcess.environment(database: db, [
            "ACK_LISTEN": "127.0.0.1:\(port)", "ACK_SECRET": Ack.secret, "ACK_MAX_CONNECTIONS": "900",
        ])
        let started = try NotifierProcess.start([], environment: env, wrapper: ["/usr/bin/prlimit", "--nofile=1024:1024", "--"])
        let result = NotifierProcess.finish(started.0, started.1, started.2)
        #expect(result.status == 78)
        let logged = TestEnvironment.current?.journal == true
            ? try JournalReader.entries(of: result).compactMap { $0["MESSAGE"] }.joined(separator: "\n") + result.stderr
            : result.stderr
        #expect(logged.contains("ACK_MAX_CONNECTIONS") && logged.contains("at most 768"), "\(logged.suffix(800))")
    }
}
