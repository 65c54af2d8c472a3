import Config

extension MailSettings {
    /// Makes the transport `MAIL_TRANSPORT` names: an SMTP connection, or a writer into `OUTBOX_DIR`.
    /// One per worker thread; neither may be shared between threads.
    package func makeMailTransport() throws -> any MailTransport {
        switch transport {
        case .smtp:
            return try SMTPTransport(settings: smtp)
        case .outbox:
            return OutboxTransport(directory: try requireOutboxDirectory())
        }
    }

    /// Where mail goes, in words, for `check` and logs: `SMTP smtp://host:587 (starttls)` or `outbox /dir`.
    package var transportDescription: String {
        switch transport {
        case .smtp: "SMTP \(smtp.url) (\(smtp.tls.rawValue))"
        case .outbox: "outbox \(outboxDirectory ?? "(OUTBOX_DIR not set)")"
        }
    }
}
