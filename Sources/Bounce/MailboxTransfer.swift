import CCurl
import Config
import CShims
import Curl
import Foundation
import Values

/// One libcurl handle logged in to a bounce mailbox's server (IMAP or POP3): the login, TLS with
/// the certificate verified, timeouts, and a reply kept up to a limit. `IMAPMailbox` and
/// `POP3Mailbox` speak their protocol through it; libcurl keeps the connection between transfers.
///
/// Blocking, one thread at a time. Errors carry libcurl's words, which never hold the password.
/// A transfer hears the process's stop signal (`CurlHandle.stop`): a server that accepts and then
/// says nothing cannot hold a stopping daemon for the whole timeout.
package final class MailboxTransfer {
    /// A step that failed: the operation, and libcurl's words.
    package struct Failure: Error, CustomStringConvertible, Equatable {
        package var operation: String
        package var detail: String
        package var description: String { "bounce mailbox: \(operation): \(detail)" }
    }

    /// The longest reply to a command kept (a listing of many messages).
    static let commandLimit = 1 << 20

    private let curl: CurlHandle
    private let capture = Capture()
    private let server: BounceSettings.Server

    /// Prepares a handle for `server` with `password`; nothing is connected until the first `run`.
    /// Once `stop` is raised, a transfer in flight is given up within `CurlHandle.stopGrace`.
    init(server: BounceSettings.Server, password: Secret, caFile: String?, timeoutSeconds: Int, stop: StopSignal?) throws(Failure) {
        guard let curl = CurlHandle() else { throw Failure(operation: "setup", detail: "libcurl could not create a handle") }
        self.curl = curl
        curl.stop = stop
        self.server = server
        curl.set(CURLOPT_USERNAME, server.user)
        curl.set(CURLOPT_PASSWORD, password.value)
        curl.set(CURLOPT_CONNECTTIMEOUT, timeoutSeconds)
        curl.set(CURLOPT_SERVER_RESPONSE_TIMEOUT, timeoutSeconds)
        curl.set(CURLOPT_SSL_VERIFYPEER, 1)
        curl.set(CURLOPT_SSL_VERIFYHOST, 2)
        if server.tls == .tls { curl.set(CURLOPT_USE_SSL, sileme_curl_usessl_all()) }
        if let caFile { curl.set(CURLOPT_CAINFO, caFile) }
        curl.note(sileme_curl_set_write_callback(curl.easy, Capture.callback, Unmanaged.passUnretained(capture).toOpaque()))
        if let refusal = curl.refusal { throw Failure(operation: "setup", detail: "libcurl rejected an option: \(refusal)") }
    }

    /// `imaps://host:port` (or `pop3s`, or without `s` for a loopback server without TLS).
    func baseURL(scheme: String) -> String {
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        return "\(scheme)\(server.tls == .tls ? "s" : "")://\(host):\(server.port)"
    }

    /// Runs one transfer of `url` with the custom command `request` (nil: the URL's own, a fetch
    /// or a listing); `noBody` for a command with no reply body (POP3's `DELE`); `close` ends the
    /// session after it (POP3 commits deletions only at `QUIT`). Returns the reply, or nil when it
    /// outgrew `limit` (the transfer is then stopped).
    func run(url: String, request: String?, noBody: Bool = false, close: Bool = false, limit: Int = commandLimit,
             operation: String) throws(Failure) -> [UInt8]? {
        capture.reset(limit: limit)
        curl.set(CURLOPT_URL, url)
        if let request { curl.set(CURLOPT_CUSTOMREQUEST, request) } else {
            curl.note(sileme_curl_setopt_pointer(curl.easy, CURLOPT_CUSTOMREQUEST, nil))
        }
        curl.set(CURLOPT_NOBODY, noBody ? 1 : 0)
        curl.set(CURLOPT_FORBID_REUSE, close ? 1 : 0)
        let code = curl.perform()
        if capture.overflowed { return nil }
        guard code == CURLE_OK else { throw Failure(operation: operation, detail: curl.detail(code, whenStopped: "stopped")) }
        return capture.bytes
    }

    /// What libcurl hands over of a reply, kept up to `limit` bytes (more stops the transfer).
    private final class Capture {
        private var limit = MailboxTransfer.commandLimit
        private(set) var bytes: [UInt8] = []
        private(set) var overflowed = false

        func reset(limit: Int) {
            self.limit = limit
            bytes.removeAll(keepingCapacity: true)
            overflowed = false
        }

        static let callback: sileme_write_callback = { data, size, count, userdata in
            guard let userdata, let data else { return 0 }
            let capture = Unmanaged<Capture>.fromOpaque(userdata).takeUnretainedValue()
            guard capture.bytes.count + size * count <= capture.limit else {
                capture.overflowed = true
                return 0
            }
            capture.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
    }
}
