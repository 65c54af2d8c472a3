import Foundation
import Values

/// The acknowledgement page's settings (`ACK_*`, docs/acknowledgement.md): where the
/// links in the mails point, the key that signs them, and where the daemon serves the page.
///
/// The key never prints itself (`Secret`); the base URL is not secret (it is in every mail).
package struct AckSettings: Sendable {
    /// Where the daemon listens (`ACK_LISTEN`): a host (an IPv4 address, `[IPv6]` or a name) and a port.
    package struct Listen: Sendable, Equatable, CustomStringConvertible {
        /// The host to bind (brackets removed from an IPv6 address).
        package var host: String
        /// The TCP port.
        package var port: Int

        /// `host:port` (an IPv6 host in brackets).
        package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

        /// Creates the value.
        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Parses `host:port` or `[v6]:port`; nil when it is neither or the port is outside 1–65535.
        /// Port 0 is accepted only by tests through `init(host:port:)`.
        package init?(parsing text: String) {
            let host: Substring, port: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
                host = text[text.index(after: text.startIndex)..<close]
                port = text[text.index(close, offsetBy: 2)...]
            } else {
                guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
                host = text[..<colon]
                port = text[text.index(after: colon)...]
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) }),
                  let number = Int(port), (1...65535).contains(number) else { return nil }
            self.init(host: String(host), port: number)
        }
    }

    /// `ACK_BASE_URL`: the page's public address (behind the operator's TLS proxy); a link is it,
    /// a `/` and the token. Nil: no link in any mail or event (the feature is off for contacts).
    package var baseURL: String?
    /// `ACK_SECRET` (also `ACK_SECRET_FILE`, credential `ack-secret`): the HMAC key of the tokens.
    package var secret: Secret
    /// `ACK_LISTEN`: where this daemon serves the page; nil serves nothing (another daemon may).
    package var listen: Listen?
    /// `ACK_RATE_LIMIT`: requests per minute one client address may make (default 30); more get
    /// HTTP 429 with the neutral page.
    package var rateLimitPerMinute: Int = 30
    /// `ACK_MAX_CONNECTIONS`: the page's open connections at most (default 256); while that many
    /// are open no new one is accepted. With the descriptors the rest of the daemon needs it must
    /// fit the process's limit, checked at start (docs/acknowledgement.md, "Limits").
    package var maxConnections: Int = 256
    /// How many days after the streak began a link stops working (30).
    package var validDays: Int = 30

    /// Creates the settings.
    package init(baseURL: String?, secret: Secret, listen: Listen?) {
        self.baseURL = baseURL
        self.secret = secret
        self.listen = listen
    }

    /// The link for `token`: the base URL (without a trailing `/`), `/`, the token. Nil without a base URL.
    package func link(token: String) -> String? {
        guard var base = baseURL else { return nil }
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/" + token
    }
}
