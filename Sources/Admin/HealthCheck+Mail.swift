import Config
import Mail

extension HealthCheck.Part {
    /// `outbox` (`MAIL_TRANSPORT=outbox`): a probe file created, synced and removed in the
    /// outbox's tmp/ (exit 69 if not). The mail goes nowhere else: no relay is checked.
    static let outbox = Self(when: HealthCheck.writesToOutbox, lines: { context in
        guard let directory = context.configuration.outboxDirectory else { return [] }
        let outcome = OutboxTransport(directory: directory).verify()
        let accepted = if case .accepted = outcome { true } else { false }
        return [Finding(subject: "outbox", ok: accepted, detail: outcome.text, failure: .unavailable)]
    })

    /// `mail server` and `fallback relay N`: every relay, the primary and each of
    /// `SMTP_FALLBACK`, connected, TLS and AUTH. One that cannot be reached fails the check (69)
    /// even while another carries the mail: someone has to mend it before that one fails too.
    static let relays = Self(when: { !HealthCheck.writesToOutbox($0) }, lines: { context in
        context.configuration.mail.relays.enumerated().map { index, relay in
            let subject = index == 0 ? "mail server" : "fallback relay \(index)"
            do throws(MailError) {
                let outcome = try SMTPTransport(settings: relay).verify()
                guard case .accepted = outcome else {
                    return Finding(subject: subject, ok: false, detail: "\(relay.url): \(outcome.text)", failure: .unavailable)
                }
                return Finding(subject: subject, ok: true,
                               detail: "\(relay.url): connected as \(relay.heloName), "
                                   + (relay.tls == .none ? "no TLS" + (index == 0 ? " (SMTP_TLS=none)" : " (tls=none)") : "TLS verified")
                                   + (relay.user == nil ? ", no AUTH" : ", authenticated"))
            } catch {
                return Finding(subject: subject, ok: false, detail: error.description)
            }
        }
    })
}

extension HealthCheck {
    /// Whether the mail goes to the outbox directory, checked there instead of through the relays.
    static func writesToOutbox(_ configuration: NotifierConfiguration) -> Bool {
        configuration.mailTransport == .outbox && configuration.outboxDirectory != nil
    }
}
