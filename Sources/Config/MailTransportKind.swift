/// How messages leave the notifier (`MAIL_TRANSPORT`).
package enum MailTransportKind: String, Sendable, CaseIterable {
    /// Over SMTP to `SMTP_HOST` (the default).
    case smtp
    /// As one RFC 5322 file per message in the Maildir-style folder `OUTBOX_DIR`, for a local
    /// MTA's pickup or queue, or a demo without a mail server (see `OutboxTransport`).
    case outbox
}
