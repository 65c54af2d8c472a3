import Foundation
import Values

/// Everything needed to reach and authenticate to the mail server.
public struct SMTPSettings: Sendable, Equatable {
    /// `SMTP_HOST`.
    public var host: String = "localhost"
    /// `SMTP_PORT`; defaults from the TLS mode (587, 465 or 25).
    public var port: Int = 587
    /// `SMTP_TLS` (default `starttls`).
    public var tls: TLSMode = .starttls
    /// `SMTP_USER`; no AUTH when empty.
    public var user: String?
    /// The password from `SMTP_PASSWORD`, `SMTP_PASSWORD_FILE` or the `smtp-password` credential.
    public var password: Secret?
    /// `SMTP_CA_FILE`: a PEM bundle to verify the server with instead of the system store.
    public var caFile: String?
    /// `SMTP_TIMEOUT_SECONDS`: connect and per-response timeout (default 30).
    public var timeoutSeconds: Int = 30
    /// `SMTP_RETRY_ATTEMPTS`: attempts per message within one run for transient failures (default 3).
    public var retryAttempts: Int = 3
    /// `SMTP_RETRY_BACKOFF_SECONDS`: first pause between attempts, doubled each time (default 2).
    public var retryBackoffSeconds: Double = 2
    /// `SMTP_CONNECTIONS`: parallel SMTP connections used by one run (default 4).
    public var connections: Int = 4
    /// `SMTP_RATE_LIMIT`: at most this many messages per second over all connections (unset: no limit).
    public var rateLimit: Double?
    /// `SMTP_HELO_NAME`: the name the notifier gives in EHLO (default: the machine's fully
    /// qualified name, which servers with `reject_non_fqdn_helo_hostname` require).
    public var heloName: String = "localhost"

    /// Creates settings with the documented defaults.
    public init() {}

    /// The mail server's URL, as reports show it.
    public var url: String {
        let scheme = tls == .tls ? "smtps" : "smtp"
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(hostPart):\(port)"
    }

    /// The URL libcurl connects to: `url` with the EHLO name as its path (libcurl greets with the
    /// URL's path, and with the short host name when there is none).
    public var transferURL: String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-:"))
        return url + "/" + (heloName.addingPercentEncoding(withAllowedCharacters: allowed) ?? "localhost")
    }
}
