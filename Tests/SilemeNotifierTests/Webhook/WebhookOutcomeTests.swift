import Foundation
import Testing
@testable import Webhook

/// How a webhook request's result is judged: the status table, curl errors, `Retry-After` in
/// both forms, the quoted response body, and the URL's secrets kept out of every reason.
@Suite("Webhook outcome")
struct WebhookOutcomeTests {
    typealias Outcome = WebhookTransport.Outcome
    static let now = Date(timeIntervalSince1970: 1_768_266_000)  // Tue, 13 Jan 2026 01:00:00 GMT

    static func classify(_ status: Int, curl: Int = 0, retryAfter: String? = nil, body: String = "") -> Outcome {
        Outcome.classify(curlCode: curl, curlMessage: "message", status: status, retryAfter: retryAfter, body: Array(body.utf8), now: now)
    }

    @Test("2xx is delivered", arguments: [200, 201, 202, 204, 299])
    func delivered(_ status: Int) {
        #expect(Self.classify(status) == .delivered(status: status))
    }

    @Test("408, 425, 429 and 5xx are transient", arguments: [408, 425, 429, 500, 502, 503, 504, 599])
    func transient(_ status: Int) {
        guard case .transient(let reason, let retryAfter) = Self.classify(status, body: "busy") else {
            Issue.record("\(status): \(Self.classify(status))")
            return
        }
        #expect(reason == "HTTP \(status): busy" && retryAfter == nil)
    }

    @Test("other 4xx and every 3xx are permanent", arguments: [400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 451, 499, 300, 301, 302, 307, 308])
    func permanent(_ status: Int) {
        guard case .permanent(let got, let reason) = Self.classify(status, body: "no") else {
            Issue.record("\(status): \(Self.classify(status))")
            return
        }
        #expect(got == status && reason.hasPrefix("HTTP \(status): no"))
        #expect(reason.contains("redirects are not followed") == (300...399).contains(status))
    }

    @Test("every curl error is transient, whatever status came before it",
          arguments: [(7, 0), (28, 0), (28, 200), (35, 0), (52, 0), (56, 200), (60, 0), (77, 0), (42, 0), (18, 200)])
    func curlErrors(_ curl: Int, _ status: Int) {
        #expect(Self.classify(status, curl: curl, retryAfter: "5") == .transient(reason: "curl error \(curl): message", retryAfter: nil))
    }

    @Test("an unexpected status (1xx, 0, 600+) is transient", arguments: [0, 100, 199, 600, 999])
    func unexpected(_ status: Int) {
        guard case .transient(let reason, _) = Self.classify(status) else { Issue.record("\(status)"); return }
        #expect(reason.hasPrefix("unexpected HTTP \(status)"))
    }

    @Test("Retry-After is honoured on a transient answer and ignored on the others")
    func retryAfterUse() {
        #expect(Self.classify(429, retryAfter: "1") == .transient(reason: "HTTP 429", retryAfter: 1))
        #expect(Self.classify(503, retryAfter: "Tue, 13 Jan 2026 01:00:30 GMT") == .transient(reason: "HTTP 503", retryAfter: 30))
        #expect(Self.classify(503, retryAfter: "soon") == .transient(reason: "HTTP 503", retryAfter: nil))
        #expect(Self.classify(404, retryAfter: "5") == .permanent(status: 404, reason: "HTTP 404"))
        #expect(Self.classify(200, retryAfter: "5") == .delivered(status: 200))
    }

    @Test("Retry-After as seconds and as an HTTP date in its three forms, a past date as 0, at most an hour",
          arguments: [("0", 0.0), ("1", 1), (" 120 ", 120), ("3600", 3600), ("3601", 3600), ("86400", 3600),
                      ("99999999999999999999999999", 3600),
                      ("Tue, 13 Jan 2026 01:00:05 GMT", 5), ("Tuesday, 13-Jan-26 01:02:00 GMT", 120), ("Tue Jan 13 01:00:10 2026", 10),
                      ("Tue Jan  6 01:00:10 2026", 0), ("Mon, 12 Jan 2026 23:00:00 GMT", 0), ("Wed, 14 Jan 2026 01:00:00 GMT", 3600),
                      ("Sun, 06 Nov 1994 08:49:37 GMT", 0)])
    func retryAfter(_ value: String, _ seconds: Double) {
        #expect(Outcome.retryAfter(value, now: Self.now) == seconds, "\(value)")
    }

    @Test("a Retry-After that is neither is ignored",
          arguments: ["", "-1", "1.5", "1e3", "0x10", "soon", "Tue, 13 Jan 2026 01:00:05", "Tue, 13 Foo 2026 01:00:05 GMT",
                      "Tue, 32 Jan 2026 01:00:05 GMT", "Tue, 13 Jan 2026 25:00:05 GMT", "Tue, 13 Jan 2026 01:60:05 GMT",
                      "13 Jan 2026 01:00:05 GMT", "Tue, 13 Jan 26000 01:00:05 GMT", "Xyz, 13 Jan 2026 01:00:05 GMT", "５"])
    func retryAfterInvalid(_ value: String) {
        #expect(Outcome.retryAfter(value, now: Self.now) == nil, "\(value)")
    }

    @Test("the response body is quoted on one line, cut to 200 characters")
    func quotedBody() {
        #expect(Outcome.quote(Array("  a\r\n\tb\u{0}c\u{85}d  ".utf8)) == "a b c d")
        let long = String(repeating: "长", count: 1000)
        guard case .permanent(_, let reason) = Self.classify(404, body: long) else { Issue.record("not permanent"); return }
        #expect(reason == "HTTP 404: " + String(repeating: "长", count: 200) + "…")
        #expect(Outcome.quote([0xFF, 0x41]) == "\u{FFFD}A")
    }

    @Test("the URL's userinfo, query and fragment are what is redacted, longest first; a plain URL only as a whole")
    func sensitiveParts() {
        let url = "https://bot:p%40ss-word@hooks.example.com:8443/send/path?key=abcd1234&x=1&token=t%2Bk3n#frag"
        let parts = WebhookTransport.sensitiveParts(of: url)
        for part in [url, "bot", "p%40ss-word", "p@ss-word", "key=abcd1234&x=1&token=t%2Bk3n", "abcd1234", "t%2Bk3n", "t+k3n", "frag"] {
            #expect(parts.contains(part), "\(part)")
        }
        #expect(!parts.contains("1") && !parts.contains("hooks.example.com") && !parts.contains("/send/path"))
        #expect(parts.first == url && parts.dropFirst().map(\.count) == parts.dropFirst().map(\.count).sorted(by: >))
        let reason = WebhookTransport.redact("HTTP 401: bad key abcd1234 for bot:p@ss-word at \(url)", parts)
        for leak in ["abcd1234", "p@ss-word", "t+k3n", "p%40ss"] { #expect(!reason.contains(leak), "\(reason)") }
        #expect(WebhookTransport.sensitiveParts(of: "http://127.0.0.1:8080/hook") == ["http://127.0.0.1:8080/hook"])
    }
}
