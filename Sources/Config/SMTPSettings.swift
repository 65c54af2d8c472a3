import Foundation
import Values

/// Everything needed to reach and authenticate to the mail server.
package struct SMTPSettings: Sendable, Equatable {
    /// `SMTP_HOST`.
    package var host: String = "localhost"
    /// `SMTP_PORT`; defaults from the TLS mode (587, 465 or 25).
    package var port: Int = 587
    /// `SMTP_TLS` (default `starttls`).
    package var tls: TLSMode = .starttls
    /// `SMTP_USER`; no AUTH when empty.
    package var user: String?
    /// The password from `SMTP_PASSWORD`, `SMTP_PASSWORD_FILE` or the `smtp-password` credential.
    package var password: Secret?
    /// `SMTP_CA_FILE`: a PEM bundle to verify the server with instead of the system store.
    package var caFile: String?
    /// `SMTP_TIMEOUT_SECONDS`: connect and per-response timeout (default 30).
    package var timeoutSeconds: Int = 30
    /// `SMTP_RETRY_ATTEMPTS`: attempts per message within one run for transient failures (default 3).
    package var retryAttempts: Int = 3
    /// `SMTP_RETRY_BACKOFF_SECONDS`: first pause between attempts, doubled each time (default 2).
    package var retryBackoffSeconds: Double = 2
    /// `SMTP_CONNECTIONS`: parallel SMTP connections used by one run (default 4).
    package var connections: Int = 4
    /// `SMTP_RATE_LIMIT`: at most this many messages per second over all connections (unset: no limit).
    package var rateLimit: Double?
    /// `SMTP_HELO_NAME`: the name the notifier gives in EHLO (default: the machine's fully
    /// qualified name, which servers with `reject_non_fqdn_helo_hostname` require).
    package var heloName: String = "localhost"

    /// Creates settings with the documented defaults.
    package init() {}

    /// The mail server's URL, as reports show it.
    package var url: String {
        let scheme = tls == .tls ? "smtps" : "smtp"
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(hostPart):\(port)"
    }

    /// The URL libcurl connects to: `url` with the EHLO name as its path (libcurl greets with the
    /// URL's path, and with the short host name when there is none).
    package var transferURL: String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-:"))
        return url + "/" + (heloName.addingPercentEncoding(withAllowedCharacters: allowed) ?? "localhost")
    }
}
