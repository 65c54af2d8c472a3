import CCurl
import CShims
import Foundation
import Logging
import Mail
import Values

/// A dead man's switch (healthchecks.io style): after each run the daemon fetches `HEARTBEAT_URL`,
/// or `HEARTBEAT_URL/fail` when the run failed, so that operators learn when the notifier itself
/// stops running. A failing ping is logged and never affects the run.
package struct Heartbeat {
    package let url: String?
    package let logger: Logger
    /// A raised stop signal ends a ping in flight (within about a second).
    package var stop: StopSignal?

    package func report(success: Bool) {
        guard let url, !url.isEmpty else { return }
        guard sileme_curl_runtime_init() == CURLE_OK else { return }
        guard let handle = curl_easy_init() else { return }
        defer { curl_easy_cleanup(handle) }
        let target = success ? url : (url.hasSuffix("/") ? url + "fail" : url + "/fail")
        _ = sileme_curl_setopt_string(handle, CURLOPT_URL, target)
        _ = sileme_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = sileme_curl_setopt_long(handle, CURLOPT_TIMEOUT, 10)
        _ = sileme_curl_setopt_long(handle, CURLOPT_FAILONERROR, 1)
        _ = sileme_curl_setopt_long(handle, CURLOPT_NOBODY, 0)
        _ = sileme_curl_set_write_discard(handle)
        if let stop {
            _ = sileme_curl_set_progress_callback(handle, { userdata, _, _, _, _ in
                guard let userdata else { return 0 }
                return Unmanaged<StopSignal>.fromOpaque(userdata).takeUnretainedValue().isStopped ? 1 : 0
            }, Unmanaged.passUnretained(stop).toOpaque())
        }
        let code = withExtendedLifetime(stop) { curl_easy_perform(handle) }
        if code != CURLE_OK {
            logger.warning("heartbeat ping failed: \(String(cString: curl_easy_strerror(code)))")
        }
    }
}
