import CCurl
import CShims
import Config
import Curl
import Foundation
import Values

/// POSTs signed webhook events to `WEBHOOK_URL` through libcurl, reusing one connection for every
/// event while the endpoint keeps it open.
///
/// Each request carries `Content-Type: application/json`, `User-Agent: sileme-notifier/<version>`
/// and the Standard Webhooks headers `webhook-id`, `webhook-timestamp` (the time of this attempt)
/// and `webhook-signature`. TLS is always verified (against `WEBHOOK_CA_FILE` when set), redirects
/// are never followed, and `WEBHOOK_TIMEOUT_SECONDS` bounds both the connect and the whole request.
/// No reason it returns holds the signing key, the URL's userinfo or its query.
///
/// Blocking; one transport per thread (a curl easy handle must not be used by two threads).
package final class WebhookTransport: CurlTransport {
    /// The handle (its stop signal and wait hook are `CurlTransport`'s: a request given up after a
    /// stop is a transient outcome — the receiver de-duplicates by `webhook-id`, so sending it
    /// again later is safe even if it had arrived).
    package let curl: CurlHandle
    private let signer: WebhookSigner
    private let redactions: [String]
    private let response = ResponseCapture()

    /// The `User-Agent` header.
    package static let userAgent = "sileme-notifier/\(NotifierVersion.current)"

    /// Prepares a handle for `settings`; nothing is connected until the first `send`.
    package init(settings: WebhookSettings) throws(SetupError) {
        guard let curl = CurlHandle() else { throw SetupError(message: "libcurl could not create a handle") }
        self.curl = curl
        signer = WebhookSigner(key: settings.signingKey)
        redactions = Self.sensitiveParts(of: settings.url.value)
        curl.set(CURLOPT_URL, settings.url.value)
        curl.set(CURLOPT_PROTOCOLS_STR, "http,https")
        curl.set(CURLOPT_POST, 1)
        curl.set(CURLOPT_FOLLOWLOCATION, 0)
        curl.verifyPeer(caFile: settings.caFile, connectTimeout: settings.timeoutSeconds)
        curl.set(CURLOPT_TIMEOUT, settings.timeoutSeconds)
        curl.set(CURLOPT_USERAGENT, Self.userAgent)
        curl.note(sileme_curl_set_write_callback(curl.easy, Capture.callback, Unmanaged.passUnretained(response.body).toOpaque()))
        curl.note(sileme_curl_set_header_callback(curl.easy, Capture.callback, Unmanaged.passUnretained(response.headers).toOpaque()))
        if let refusal = curl.refusal { throw SetupError(message: "libcurl rejected an option: \(refusal)") }
    }

    /// Sends `event` with its body (`WebhookEvent.body(using:)`), signed for the time `now`.
    package func send(_ event: WebhookEvent, using template: WebhookBodyTemplate? = nil, now: Date = Date()) -> Outcome {
        send(id: event.id, body: event.body(using: template), now: now)
    }

    /// POSTs `body` as the event `id` (a valid `webhook-id`, see `WebhookEvent.isValidID`), with a
    /// `webhook-timestamp` of `now` and the signature over both.
    package func send(id: String, body: String, now: Date = Date()) -> Outcome {
        guard WebhookEvent.isValidID(id) else {
            return .permanent(status: 0, reason: WebhookEvent.InvalidID(length: id.utf8.count).description)
        }
        let timestamp = Int(now.timeIntervalSince1970.rounded(.down))
        var headers: UnsafeMutablePointer<curl_slist>?
        for line in ["Content-Type: application/json", "Expect:", "webhook-id: \(id)", "webhook-timestamp: \(timestamp)",
                     "webhook-signature: \(signer.signature(id: id, timestamp: timestamp, body: body))"] {
            headers = curl_slist_append(headers, line)
        }
        defer { curl_slist_free_all(headers) }
        response.reset()
        let bytes = Array(body.utf8)
        _ = sileme_curl_setopt_pointer(curl.easy, CURLOPT_HTTPHEADER, headers)
        _ = sileme_curl_setopt_off(curl.easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
        // Copied by libcurl: the bytes need not outlive this call. Never a null pointer (an empty
        // array has no address): libcurl would then read the body from standard input.
        if bytes.isEmpty {
            _ = sileme_curl_setopt_string(curl.easy, CURLOPT_COPYPOSTFIELDS, "")
        } else {
            _ = bytes.withUnsafeBufferPointer { sileme_curl_setopt_pointer(curl.easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
        }
        let code = curl.perform()
        _ = sileme_curl_setopt_pointer(curl.easy, CURLOPT_HTTPHEADER, nil)
        let outcome = Outcome.classify(
            curlCode: Int(code.rawValue), curlMessage: curl.detail(code, whenStopped: "given up: the process was stopped before the endpoint answered"),
            status: curl.responseCode, retryAfter: response.headers.value("Retry-After"), body: response.body.bytes, now: now)
        return redacted(outcome)
    }

    /// `outcome` with every sensitive part of the URL taken out of its reason.
    private func redacted(_ outcome: Outcome) -> Outcome {
        switch outcome {
        case .delivered: outcome
        case .transient(let reason, let retryAfter): .transient(reason: Self.redact(reason, redactions), retryAfter: retryAfter)
        case .permanent(let status, let reason): .permanent(status: status, reason: Self.redact(reason, redactions))
        }
    }

    /// `text` with each of `parts` replaced by `<redacted>`.
    static func redact(_ text: String, _ parts: [String]) -> String {
        parts.reduce(text) { $0.replacingOccurrences(of: $1, with: "<redacted>") }
    }

    /// What of `url` must never show: its userinfo and query (whole, and each user, password and
    /// query value of 3 characters or more, as written and percent-decoded), longest first.
    static func sensitiveParts(of url: String) -> [String] {
        guard let parts = URLComponents(string: url) else { return [url] }
        var secrets = [parts.percentEncodedUser, parts.percentEncodedPassword, parts.user, parts.password,
                       parts.percentEncodedQuery, parts.query, parts.percentEncodedFragment]
        for item in parts.queryItems ?? [] { secrets.append(item.value) }
        for item in parts.percentEncodedQueryItems ?? [] { secrets.append(item.value) }
        let sensitive = Set(secrets.compactMap { $0 }.filter { $0.count >= 3 })
        return [url] + sensitive.sorted { $0.count > $1.count }
    }

    /// Why a transport could not be made (libcurl itself failed).
    package struct SetupError: Error, Sendable, CustomStringConvertible {
        /// What failed.
        package let message: String
        package var description: String { "webhook: \(message)" }
    }
}

extension WebhookEvent {
    /// The body to send: `template`'s rendering when there is one, else `jsonBody`.
    package func body(using template: WebhookBodyTemplate?) -> String { template?.render(self) ?? jsonBody }
}

/// What libcurl hands over of a response, one piece at a time (the body in chunks, the headers a
/// line per call): `callback` is both the write and the header callback, each with its capture.
private class Capture {
    /// Passes each piece to the capture `userdata` points at; takes it all.
    static let callback: sileme_write_callback = { data, size, count, userdata in
        guard let userdata else { return 0 }
        Unmanaged<Capture>.fromOpaque(userdata).takeUnretainedValue().append(UnsafeRawBufferPointer(start: data, count: size * count))
        return size * count
    }

    func append(_ data: UnsafeRawBufferPointer) {}
}

/// The start of the response body (the rest is read and dropped).
private final class BodyCapture: Capture {
    /// How much of the body is kept.
    static let limit = 4096
    private(set) var bytes: [UInt8] = []

    func reset() { bytes.removeAll(keepingCapacity: true) }

    override func append(_ data: UnsafeRawBufferPointer) {
        let room = Self.limit - bytes.count
        if room > 0 { bytes.append(contentsOf: data.prefix(room)) }
    }
}

/// The header lines of the last response (after a `100 Continue`, those of the final one).
private final class HeaderCapture: Capture {
    private var lines: [String] = []

    func reset() { lines.removeAll(keepingCapacity: true) }

    override func append(_ data: UnsafeRawBufferPointer) {
        let line = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if line.hasPrefix("HTTP/") { lines.removeAll(keepingCapacity: true) }
        if lines.count < 200 { lines.append(String(line.prefix(1000))) }
    }

    /// The value of the last header `name` (case-insensitive), trimmed.
    func value(_ name: String) -> String? {
        let prefix = name.lowercased() + ":"
        return lines.last { $0.lowercased().hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces) }
    }
}

/// The response of the current request.
private struct ResponseCapture {
    let body = BodyCapture()
    let headers = HeaderCapture()

    func reset() {
        body.reset()
        headers.reset()
    }
}
