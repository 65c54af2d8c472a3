import Config

extension MailSettings {
    /// Makes the transport `MAIL_TRANSPORT` names: an SMTP connection — a chain of them with
    /// `SMTP_FALLBACK`, telling `onFailover` when a message passes a relay over — or a writer into
    /// `OUTBOX_DIR`. One per worker thread; none may be shared between threads.
    package func makeMailTransport(onFailover: @escaping @Sendable (RelayChain.Failover) -> Void = { _ in }) throws -> any MailTransport {
        switch transport {
        case .smtp where !fallbacks.isEmpty:
            return RelayChain(relays: relays, retry: fallbackRetry, onFailover: onFailover)
        case .smtp:
            return try SMTPTransport(settings: smtp)
        case .outbox:
            return OutboxTransport(directory: try requireOutboxDirectory())
        }
    }

    /// Every relay, the primary first (`SMTP_HOST`, then `SMTP_FALLBACK`'s).
    package var relays: [SMTPSettings] { [smtp] + fallbacks }

    /// Where mail goes, in words, for `check` and logs: `SMTP smtp://host:587 (starttls)` or `outbox /dir`.
    package var transportDescription: String {
        switch transport {
        case .smtp: "SMTP " + relays.map { "\($0.url) (\($0.tls.rawValue))" }.joined(separator: ", then ")
        case .outbox: "outbox \(outboxDirectory ?? "(OUTBOX_DIR not set)")"
        }
    }
}
