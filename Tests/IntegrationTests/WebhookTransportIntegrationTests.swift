import Foundation
import Testing
@testable import Config
@testable import Values
@testable import Webhook

/// The webhook transport against a real HTTP(S) receiver (`WebhookReceiver`, Python's standard
/// library) that checks every signature with its own HMAC and de-duplicates by `webhook-id`: plain
/// HTTP and verified TLS, every injected failure classified, retries with the same id delivering
/// each event exactly once, timeouts and the stop signal bounded, and the URL's secrets kept out
/// of every reason.
@Suite("Webhook transport on a real receiver", .enabled(if: TestEnvironment.enabled), .serialized)
struct WebhookTransportIntegrationTests {
    typealias Outcome = WebhookTransport.Outcome

    /// A fresh `whsec_` secret of 32 random bytes.
    static func secret() -> String {
        "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    static func settings(_ url: String, secret: String, ca: String? = nil, timeout: Int = 5) throws -> WebhookSettings {
        var settings = WebhookSettings(url: Secret(url), signingKey: try WebhookSettings.SigningKey(secret: Secret(secret)))
        settings.caFile = ca
        settings.timeoutSeconds = timeout
        return settings
    }

    static func event(_ id: String, _ type: WebhookEventType = .alert, name: String = "张三") throws -> WebhookEvent {
        let day = CalendarDate(year: 2026, month: 1, day: 13)!
        let payload = WebhookEvent.Payload(userID: "3f0e6a5c-1111-4222-8333-944445555666", userName: name, runDate: day,
                                           lastCheckInDate: day.adding(days: -3), missDays: 3,
                                           contacts: [.init(email: "mum@example.com", position: 1)])
        return try WebhookEvent(type: type, id: id, timestamp: Date(timeIntervalSince1970: 1_768_266_000), payload: payload)
    }

    /// A port on 127.0.0.1 where nothing listens (bound for a moment, then closed).
    static func closedPort() throws -> Int {
        let port = try SilentServer().port
        return port
    }

    /// Sends `event` as a run would: again after each transient outcome (waiting its
    /// `Retry-After`, at most 2 s here), at most `attempts` times; the outcomes in order.
    static func deliver(_ event: WebhookEvent, _ transport: WebhookTransport, attempts: Int = 5) -> [Outcome] {
        var outcomes: [Outcome] = []
        while outcomes.count < attempts {
            let outcome = transport.send(event)
            outcomes.append(outcome)
            guard case .transient(_, let retryAfter) = outcome else { break }
            Thread.sleep(forTimeInterval: min(retryAfter ?? 0.1, 2))
        }
        return outcomes
    }

    @Test("plain HTTP: POST with the JSON, the three webhook headers and the User-Agent, verified by the receiver, one connection for several events")
    func plain() throws {
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let transport = try WebhookTransport(settings: Self.settings(receiver.plainURL, secret: secret))
        let events = [try Self.event("msg_plain_1"), try Self.event("msg_plain_2", .allClear, name: "Zoë \"Q\"\n"),
                      try WebhookEvent.ping(id: "msg_plain_ping", timestamp: Date())]
        for event in events { #expect(transport.send(event) == .delivered(status: 200)) }
        let records = try receiver.received()
        try #require(records.count == 3, "\(records)")
        for (record, event) in zip(records, events) {
            #expect(record.method == "POST" && record.path == "/hook" && !record.tls)
            #expect(record.verified && record.signature_ok && record.fresh, "\(record.verify_error ?? "")")
            #expect(record.delivered && !record.duplicate)
            #expect(record.id == event.id && record.body == event.jsonBody)
            #expect(record.headers["content-type"] == "application/json")
            #expect(record.headers["user-agent"] == "sileme-notifier/\(NotifierVersion.current)")
            #expect(record.headers["expect"] == nil)
            let stamp = try #require(record.timestamp.flatMap { Double($0) })
            #expect(abs(stamp - Date().timeIntervalSince1970) < 60)
            #expect(record.signature?.hasPrefix("v1,") == true)
        }
        #expect(Set(records.map(\.peer)).count == 1, "one connection: \(records.map(\.peer))")
    }

    @Test("TLS verified against the test CA; delivered and verified")
    func tls() throws {
        let env = try TestEnvironment.require()
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let url = try #require(receiver.tlsURL)
        let transport = try WebhookTransport(settings: Self.settings(url, secret: secret, ca: env.caFile))
        #expect(transport.send(try Self.event("msg_tls_1")) == .delivered(status: 200))
        #expect(transport.send(try Self.event("msg_tls_2")) == .delivered(status: 200))
        let records = try receiver.received()
        #expect(records.count == 2 && records.allSatisfy { $0.tls && $0.verified && $0.delivered })
        // 127.0.0.1 is in the certificate too.
        let byAddress = try WebhookTransport(settings: Self.settings(url.replacingOccurrences(of: "localhost", with: "127.0.0.1"),
                                                                     secret: secret, ca: env.caFile))
        #expect(byAddress.send(try Self.event("msg_tls_3")) == .delivered(status: 200))
    }

    @Test("TLS refused: a certificate of another CA, the system store against the test certificate, https to a plain port — transient, nothing received")
    func tlsRefused() throws {
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let tlsURL = try #require(receiver.tlsURL)
        let plainPort = try #require(URLComponents(string: receiver.plainURL)?.port)
        let cases: [(String, String?)] = [(tlsURL, try SMTPFaultIntegrationTests.otherCA()), (tlsURL, nil),
                                          ("https://127.0.0.1:\(plainPort)/hook", try TestEnvironment.require().caFile)]
        for (url, ca) in cases {
            let outcome = try WebhookTransport(settings: Self.settings(url, secret: secret, ca: ca)).send(try Self.event("msg_tls_bad"))
            guard case .transient(let reason, let retryAfter) = outcome else {
                Issue.record("\(url) with \(ca ?? "the system store"): \(outcome)")
                continue
            }
            #expect(reason.hasPrefix("curl error") && retryAfter == nil, "\(reason)")
        }
        #expect(try receiver.received().isEmpty, "no request got through without a verified TLS session")
    }

    @Test("every injected answer classified: 5xx, 408, 429 and 503 with Retry-After, 404, 410, 3xx not followed, a dropped connection")
    func classification() throws {
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret, byID: [
            "msg_500": [.status(500, body: "boom")], "msg_503": [.status(503, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT")],
            "msg_408": [.status(408)], "msg_429": [.status(429, retryAfter: "1")], "msg_429_long": [.status(429, retryAfter: "86400")],
            "msg_404": [.status(404, body: "no such hook")], "msg_410": [.status(410)], "msg_400": [.status(400, body: String(repeating: "x", count: 5000))],
            "msg_302": [.status(302, headers: ["Location": "http://127.0.0.1:1/elsewhere"])], "msg_drop": [.drop], "msg_204": [.status(204)],
        ])
        let transport = try WebhookTransport(settings: Self.settings(receiver.plainURL, secret: secret))
        func send(_ id: String) throws -> Outcome { transport.send(try Self.event(id)) }
        #expect(try send("msg_500") == .transient(reason: "HTTP 500: boom", retryAfter: nil))
        #expect(try send("msg_503") == .transient(reason: "HTTP 503: status 503", retryAfter: 0))
        #expect(try send("msg_408") == .transient(reason: "HTTP 408: status 408", retryAfter: nil))
        #expect(try send("msg_429") == .transient(reason: "HTTP 429: status 429", retryAfter: 1))
        #expect(try send("msg_429_long") == .transient(reason: "HTTP 429: status 429", retryAfter: 3600))
        #expect(try send("msg_404") == .permanent(status: 404, reason: "HTTP 404: no such hook"))
        #expect(try send("msg_410") == .permanent(status: 410, reason: "HTTP 410: status 410"))
        #expect(try send("msg_400") == .permanent(status: 400, reason: "HTTP 400: " + String(repeating: "x", count: 200) + "…"))
        #expect(try send("msg_302") == .permanent(status: 302, reason: "HTTP 302: status 302 (redirects are not followed)"))
        #expect(try send("msg_204") == .delivered(status: 204))
        // A connection closed without an answer, on a fresh connection. (On a reused one libcurl
        // may take the close for an idle connection the server had ended, and send the request
        // again at once on a new connection: same id and body, so the receiver keeps one.)
        let fresh = try WebhookTransport(settings: Self.settings(receiver.plainURL, secret: secret))
        guard case .transient(let reason, nil) = fresh.send(try Self.event("msg_drop")) else { Issue.record("drop not transient"); return }
        #expect(reason.hasPrefix("curl error 52"), "\(reason)")
        let records = try receiver.received()
        #expect(records.count == 11, "one request each, the redirect not followed: \(records.map(\.id))")
        #expect(records.allSatisfy { $0.verified })
    }

    @Test("retries keep the webhook-id and the body: 500, 429 with Retry-After, a drop, a hang, 503 twice, then 200 — each delivered exactly once; a 404 never")
    func retries() throws {
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret, byID: [
            "msg_r_500": [.status(500), .status(200)], "msg_r_429": [.status(429, retryAfter: "1"), .status(200)],
            "msg_r_drop": [.drop, .status(200)], "msg_r_hang": [.hang, .status(200)],
            "msg_r_503": [.status(503), .status(503, retryAfter: "0"), .status(200)], "msg_r_404": [.status(404)],
        ])
        let expected: [String: Int] = ["msg_r_500": 2, "msg_r_429": 2, "msg_r_drop": 2, "msg_r_hang": 2, "msg_r_503": 3, "msg_r_404": 1]
        // A transport (a connection) per event, as the drop must come on a fresh connection to be
        // seen (see `classification`); the last one is used again below.
        var transport = try WebhookTransport(settings: Self.settings(receiver.plainURL, secret: secret, timeout: 1))
        for (id, attempts) in expected.sorted(by: { $0.key < $1.key }) {
            transport = try WebhookTransport(settings: Self.settings(receiver.plainURL, secret: secret, timeout: 1))
            let started = Date()
            let outcomes = Self.deliver(try Self.event(id), transport)
            #expect(outcomes.count == attempts, "\(id): \(outcomes)")
            #expect(outcomes.last == (id == "msg_r_404" ? .permanent(status: 404, reason: "HTTP 404: status 404") : .delivered(status: 200)))
            if id == "msg_r_429" { #expect(Date().timeIntervalSince(started) >= 1, "Retry-After: 1 was waited") }
        }
        // A run that could not record the delivery sends it again: the receiver drops the duplicate.
        #expect(transport.send(try Self.event("msg_r_500")) == .delivered(status: 200))
        let records = try receiver.received()
        for (id, attempts) in expected {
            let mine = records.filter { $0.id == id }
            #expect(mine.count == attempts + (id == "msg_r_500" ? 1 : 0), "\(id): \(mine.map(\.answer))")
            #expect(mine.allSatisfy { $0.verified }, "\(id): signature verified on every attempt")
            #expect(Set(mine.map(\.body)).count == 1, "\(id): the same body each time")
            #expect(mine.filter(\.delivered).count == (id == "msg_r_404" ? 0 : 1), "\(id): delivered exactly once")
        }
        #expect(records.filter { $0.id == "msg_r_500" }.last?.duplicate == true)
    }

    @Test("a hanging endpoint is given up after WEBHOOK_TIMEOUT_SECONDS, a silent port too, a refused one at once")
    func timeouts() throws {
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret, sequence: [.hang])
        let silent = try SilentServer()
        for url in [receiver.plainURL, "http://127.0.0.1:\(silent.port)/hook"] {
            let transport = try WebhookTransport(settings: Self.settings(url, secret: secret, timeout: 1))
            let started = Date()
            let outcome = transport.send(try Self.event("msg_hang"))
            let took = Date().timeIntervalSince(started)
            guard case .transient(let reason, nil) = outcome else { Issue.record("\(url): \(outcome)"); continue }
            #expect(reason.hasPrefix("curl error 28"), "\(reason)")
            #expect(took >= 0.9 && took < 4, "\(url): given up after \(took) s")
        }
        let refused = try WebhookTransport(settings: Self.settings("http://127.0.0.1:\(try Self.closedPort())/hook", secret: secret))
        guard case .transient(let reason, nil) = refused.send(try Self.event("msg_refused")) else { Issue.record("refused"); return }
        #expect(reason.hasPrefix("curl error 7"), "\(reason)")
    }

    @Test("a stop gives a hanging request up within the grace time, and onWait is called while it waits")
    func stopSignal() throws {
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret, sequence: [.hang])
        let transport = try WebhookTransport(settings: Self.settings(receiver.plainURL, secret: secret, timeout: 60))
        let stop = StopSignal()
        let waits = Locked(0)
        transport.stop = stop
        transport.onWait = { waits.withLock { $0 += 1 } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { stop.stop() }
        let started = Date()
        let outcome = transport.send(try Self.event("msg_stop"))
        let took = Date().timeIntervalSince(started)
        #expect(outcome == .transient(reason: "curl error 42: given up: the process was stopped before the endpoint answered", retryAfter: nil))
        #expect(took >= 1.5 + WebhookTransport.stopGrace - 0.1 && took < 1.5 + WebhookTransport.stopGrace + 1.5, "\(took) s")
        #expect(waits.withLock { $0 } >= 1)
    }

    @Test("the URL's userinfo and query never show in a reason, even when the endpoint echoes them")
    func urlSecrets() throws {
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret, sequence: [
            .status(401, body: "bad key Key-Secret-2 for user Pw-Secret-1"), .status(503, body: "retry key=Key-Secret-2"),
        ])
        let url = receiver.plainURL.replacingOccurrences(of: "http://", with: "http://bot:Pw-Secret-1@") + "?key=Key-Secret-2&x=1"
        let transport = try WebhookTransport(settings: Self.settings(url, secret: secret))
        let refused = try WebhookTransport(settings: Self.settings(
            "http://bot:Pw-Secret-1@127.0.0.1:\(try Self.closedPort())/hook?key=Key-Secret-2", secret: secret))
        let outcomes = [transport.send(try Self.event("msg_s1")), transport.send(try Self.event("msg_s2")), refused.send(try Self.event("msg_s3"))]
        #expect(outcomes.map { if case .permanent(let status, _) = $0 { status } else { 0 } } == [401, 0, 0])
        for outcome in outcomes {
            for leak in ["Pw-Secret-1", "Key-Secret-2", secret, String(secret.dropFirst(6))] {
                #expect(!outcome.reason.contains(leak), "\(outcome.reason)")
            }
        }
        #expect(outcomes[0].reason.contains("<redacted>"))
        // The endpoint got the query and the credentials (as Basic authentication).
        let records = try receiver.received()
        #expect(records.first?.path == "/hook?key=Key-Secret-2&x=1" && records.first?.headers["authorization"]?.hasPrefix("Basic ") == true)
    }

    @Test("a body template's rendering is what is sent and signed; an empty body and a large one go as they are")
    func bodyTemplate() throws {
        let secret = Self.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let transport = try WebhookTransport(settings: Self.settings(receiver.plainURL, secret: secret))
        let path = TestEnvironment.root.appendingPathComponent("config/webhooks/wecom-markdown.json.mustache").path
        let template = try WebhookBodyTemplate(WebhookSettings.BodyTemplate(path: path), appName: "一键打卡")
        let hostile = "张\"三\"\n\\ \u{2028}"
        #expect(transport.send(try Self.event("msg_wecom", name: hostile), using: template) == .delivered(status: 200))
        #expect(transport.send(id: "msg_empty", body: "") == .delivered(status: 200))
        let big = String(repeating: "长", count: 40_000)
        #expect(transport.send(try Self.event("msg_big", name: big)) == .delivered(status: 200))
        let records = try receiver.received()
        try #require(records.count == 3)
        #expect(records.allSatisfy { $0.verified })
        #expect(records[1].body.isEmpty && records[1].headers["content-length"] == "0")
        let wecom = try #require(try JSONSerialization.jsonObject(with: Data(records[0].body.utf8)) as? [String: Any])
        #expect(wecom["msgtype"] as? String == "markdown")
        #expect(((wecom["markdown"] as? [String: Any])?["content"] as? String)?.contains(hostile) == true)
        #expect(records[2].body == (try Self.event("msg_big", name: big)).jsonBody && records[2].body.utf8.count > 120_000)
    }
}
