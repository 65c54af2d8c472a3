import CCurl
import CShims
import Foundation
import Values

/// One libcurl easy handle, run inside a multi handle of its own whose connection cache keeps
/// the connection between transfers, with what every transport of the notifier needs around it:
/// the process-wide libcurl setup, an error buffer, and a progress callback that calls `onWait`
/// and gives a transfer up `stopGrace` seconds after the stop signal was raised. The SMTP and
/// the webhook transports each own one and set their protocol's options on `easy`.
///
/// Blocking; one per thread (a curl easy handle must not be used by two threads).
package final class CurlHandle {
    /// The easy handle, for the owner's options and callbacks.
    package let easy: UnsafeMutableRawPointer
    private let multi: UnsafeMutableRawPointer
    private let waiting = WaitHook()
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// The first option libcurl refused (see `set`), `CURLE_OK` while none was.
    private var refused = CURLE_OK

    /// How long a transfer in flight may go on after a stop: long enough for a normal send (or a
    /// slow server's second) to finish, short enough for the process to exit within two seconds.
    package static let stopGrace: TimeInterval = 1.2

    /// Called from inside a transfer about once a second while libcurl waits for the server
    /// (the daemon pings systemd's watchdog from it, so a slow server is not mistaken for a hang).
    package var onWait: (@Sendable () -> Void)? {
        get { waiting.action }
        set { waiting.action = newValue }
    }

    /// The process's stop signal: once raised, a transfer still going after `stopGrace` seconds
    /// is given up (`CURLE_ABORTED_BY_CALLBACK`, the connection closed).
    package var stop: StopSignal? {
        get { waiting.stop }
        set { waiting.stop = newValue }
    }

    /// Sets libcurl up for the process (once: `curl_global_init`, `SIGPIPE` ignored) and makes
    /// the handles; nil when libcurl cannot.
    package init?() {
        guard sileme_curl_runtime_init() == CURLE_OK, let easy = curl_easy_init() else { return nil }
        guard let multi = curl_multi_init() else {
            curl_easy_cleanup(easy)
            return nil
        }
        self.easy = easy
        self.multi = multi
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        set(CURLOPT_NOSIGNAL, 1)
        if refused == CURLE_OK { refused = sileme_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer) }
        if refused == CURLE_OK {
            refused = sileme_curl_set_progress_callback(easy, { userdata, _, _, _, _ in
                guard let userdata else { return 0 }
                let hook = Unmanaged<WaitHook>.fromOpaque(userdata).takeUnretainedValue()
                hook.action?()
                // Non-zero gives the transfer up (CURLE_ABORTED_BY_CALLBACK).
                return (hook.stop?.secondsSinceStop ?? 0) >= CurlHandle.stopGrace ? 1 : 0
            }, Unmanaged.passUnretained(waiting).toOpaque())
        }
    }

    deinit {
        curl_multi_cleanup(multi)
        curl_easy_cleanup(easy)
        errorBuffer.deallocate()
    }

    /// Sets a number option; a refusal is kept for `refusal` (the first one wins).
    package func set(_ option: CURLoption, _ value: Int) {
        if refused == CURLE_OK { refused = sileme_curl_setopt_long(easy, option, value) }
    }

    /// Sets a text option; a refusal is kept for `refusal` (the first one wins).
    package func set(_ option: CURLoption, _ value: String) {
        if refused == CURLE_OK { refused = sileme_curl_setopt_string(easy, option, value) }
    }

    /// Keeps `code` as the refusal when it is the first (for options set through the shims' own calls).
    package func note(_ code: CURLcode) {
        if refused == CURLE_OK { refused = code }
    }

    /// libcurl's words for the first option it refused; nil when it took them all.
    package var refusal: String? { refused == CURLE_OK ? nil : String(cString: curl_easy_strerror(refused)) }

    /// Runs the prepared transfer, driving it at least every 100 ms so that the progress callback
    /// looks at the stop signal that often.
    package func perform() -> CURLcode {
        errorBuffer[0] = 0
        return sileme_curl_multi_run(multi, easy, 100)
    }

    /// What went wrong with a transfer that ended with `code`: `whenStopped` when the stop gave it
    /// up, else libcurl's own detail (its error buffer, or the code's text).
    package func detail(_ code: CURLcode, whenStopped: String) -> String {
        if code == CURLE_ABORTED_BY_CALLBACK { return whenStopped }
        let detail = String(cString: errorBuffer)
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }

    /// The last transfer's response code (SMTP reply or HTTP status; 0 when none came).
    package var responseCode: Int {
        var code = 0
        _ = sileme_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
        return code
    }
}

/// What the progress callback calls and hears (set by the owner of the handle, read on its thread).
private final class WaitHook {
    var action: (@Sendable () -> Void)?
    var stop: StopSignal?
}
