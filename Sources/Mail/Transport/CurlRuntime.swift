import CCurl
import CShims
import Foundation

/// libcurl's process-wide setup: `curl_global_init` exactly once, and `SIGPIPE` ignored so that a
/// server closing the connection mid-write cannot kill the process.
package enum CurlRuntime {
    private static let initialized: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()

    /// Performs the one-time setup (thread-safe: Swift initialises statics once).
    package static func initializeOnce() { _ = initialized }
}
