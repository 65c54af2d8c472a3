import CCurl
import CShims
import Config
import Curl
import Foundation
import Values

/// Sends messages over one SMTP connection through libcurl, reusing it for every message
/// (one EHLO, one TLS handshake, one AUTH) until the server or an error closes it.
///
/// Blocking; one transport per thread (a curl easy handle must not be used by two threads).
package final class SMTPTransport: CurlTransport {
    /// The handle (its stop signal and wait hook are `CurlTransport`'s: a transfer given up after a
    /// stop is a transient failure for a message not yet handed over, `.unknown` — resent later with
    /// the same `Message-ID` — for one whose final reply never came).
    package let curl: CurlHandle
    let settings: SMTPSettings
    private let replies = ReplyCapture()

    /// Prepares a handle for `settings`; nothing is connected until the first `send`.
    package init(settings: SMTPSettings) throws(MailError) {
        guard let curl = CurlHandle() else { throw MailError(message: "libcurl could not create a handle") }
        self.curl = curl
        self.settings = settings
        curl.set(CURLOPT_URL, settings.transferURL)
        curl.verifyPeer(caFile: settings.caFile, connectTimeout: settings.timeoutSeconds)
        curl.set(CURLOPT_SERVER_RESPONSE_TIMEOUT, settings.timeoutSeconds)
        // A whole transfer may take a few server responses; bound it so a silent server cannot hang a run.
        curl.set(CURLOPT_TIMEOUT, settings.timeoutSeconds * 4)
        curl.set(CURLOPT_UPLOAD, 1)
        curl.set(CURLOPT_USE_SSL, settings.tls == .none ? 0 : sileme_curl_usessl_all())
        if let user = settings.user {
            curl.set(CURLOPT_USERNAME, user)
            if let password = settings.password { curl.set(CURLOPT_PASSWORD, password.value) }
        }
        curl.note(sileme_curl_set_debug_callback(curl.easy, { _, type, data, size, userdata in
            if type == CURLINFO_HEADER_IN, let data, let userdata {
                let capture = Unmanaged<ReplyCapture>.fromOpaque(userdata).takeUnretainedValue()
                capture.append(UnsafeRawBufferPointer(start: data, count: size))
            }
            return 0
        }, Unmanaged.passUnretained(replies).toOpaque()))
        if let refusal = curl.refusal { throw MailError(message: "libcurl rejected an option: \(refusal)") }
    }

    /// Sends `message` (a complete RFC 5322 message with CRLF line ends) from `sender` to `recipient`.
    package func send(from sender: String, to recipient: String, message: [UInt8]) -> SendOutcome {
        let source = UploadSource(message)
        let recipients = curl_slist_append(nil, "<\(recipient)>")
        defer { curl_slist_free_all(recipients) }
        replies.reset()
        _ = sileme_curl_setopt_string(curl.easy, CURLOPT_MAIL_FROM, "<\(sender)>")
        _ = sileme_curl_setopt_pointer(curl.easy, CURLOPT_MAIL_RCPT, recipients)
        _ = sileme_curl_setopt_off(curl.easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(message.count))
        _ = sileme_curl_set_read_callback(curl.easy, { buffer, size, count, userdata in
            guard let buffer, let userdata else { return 0 }
            let source = Unmanaged<UploadSource>.fromOpaque(userdata).takeUnretainedValue()
            return source.read(into: buffer, capacity: size * count)
        }, Unmanaged.passUnretained(source).toOpaque())
        let code = withExtendedLifetime(source) { curl.perform() }
        _ = sileme_curl_setopt_pointer(curl.easy, CURLOPT_MAIL_RCPT, nil)
        let response = curl.responseCode
        return SendOutcome.classify(
            curlCode: Int(code.rawValue), responseCode: response, reply: replies.reply(code: response),
            curlMessage: curl.detail(code, whenStopped: "given up: the process was stopped before the server answered"),
            messageHandedOver: source.isExhausted)
    }
}

extension SMTPTransport {
    /// Connects, negotiates TLS, authenticates and sends `NOOP` (no mail), for `check`.
    /// Returns `.accepted` when the server is usable.
    package func verify() -> SendOutcome {
        let handle = curl_easy_duphandle(curl.easy)!
        defer { curl_easy_cleanup(handle) }
        _ = sileme_curl_setopt_long(handle, CURLOPT_UPLOAD, 0)
        _ = sileme_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "NOOP")
        _ = sileme_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        _ = sileme_curl_setopt_pointer(handle, CURLOPT_DEBUGFUNCTION, nil)
        _ = sileme_curl_setopt_long(handle, CURLOPT_VERBOSE, 0)
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        _ = sileme_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, buffer)
        let code = curl_easy_perform(handle)
        var response = 0
        _ = sileme_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &response)
        let detail = String(cString: buffer)
        return SendOutcome.classify(curlCode: Int(code.rawValue), responseCode: response, reply: "\(response)",
                                    curlMessage: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
    }
}

/// The bytes of one message, handed to libcurl's read callback in pieces.
private final class UploadSource {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte was handed to libcurl (the message went out after `354`).
    var isExhausted: Bool { offset == bytes.count }

    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = min(capacity, bytes.count - offset)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}

/// The server's reply lines of the current transfer, as libcurl's debug callback sees them.
private final class ReplyCapture {
    private var lines: [String] = []

    func reset() { lines.removeAll(keepingCapacity: true) }

    func append(_ data: UnsafeRawBufferPointer) {
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(whereSeparator: { $0 == "\r" || $0 == "\n" }) where !line.isEmpty {
            lines.append(String(line.prefix(500)))
        }
        if lines.count > 64 { lines.removeFirst(lines.count - 64) }
    }

    /// The last reply line with status `code` (the reply that decided the transfer; a later
    /// `221 Bye` to QUIT is passed over), or the last reply line when no line has that code.
    func reply(code: Int) -> String? {
        let replies = lines.filter { $0.count >= 3 && $0.prefix(3).allSatisfy(\.isNumber) }
        let wanted = String(code)
        return (replies.last { $0.hasPrefix(wanted) } ?? replies.last)?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
