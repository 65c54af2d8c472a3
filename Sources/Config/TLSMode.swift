/// How the SMTP connection is protected (`SMTP_TLS`).
package enum TLSMode: String, Sendable, CaseIterable {
    /// Plain connection upgraded with STARTTLS, which must succeed (never falls back to clear text).
    case starttls
    /// Implicit TLS from the first byte (`smtps://`, usually port 465).
    case tls
    /// No TLS at all. Only for a local relay; must be chosen explicitly.
    case none

    /// The port used when `SMTP_PORT` is not set.
    package var defaultPort: Int {
        switch self {
        case .starttls: 587
        case .tls: 465
        case .none: 25
        }
    }
}
