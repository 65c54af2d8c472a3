import Foundation
import Values

/// The mail's slice of the configuration: the sender, the words and zone a message is written
/// with, its templates and links, and the transport that carries it. All the Mail target is given.
package struct MailSettings: Sendable {
    /// `FROM_EMAIL` (required to send).
    package var fromEmail: String?
    /// `FROM_NAME`.
    package var fromName: String
    /// `APP_NAME`.
    package var appName: String
    /// The service zone (`TIMEZONE`): the `Date` header's, and the times a message states.
    package var timeZone: TimeZone
    /// `MISS_THRESHOLD_DAYS` (an introduction says it).
    package var thresholdDays: Int
    /// `TEMPLATE_DIR`: nil uses the built-in templates.
    package var templateDirectory: String?
    /// `DEFAULT_LANGUAGE`.
    package var defaultLanguage: LanguageTag?
    /// The acknowledgement page's settings (the links alerts and follow-ups carry).
    package var ack: AckSettings?
    /// `MAIL_TRANSPORT`.
    package var transport: MailTransportKind
    /// The SMTP server (when `transport` is `.smtp`).
    package var smtp: SMTPSettings
    /// `SMTP_FALLBACK`: the relays after `smtp`, in order.
    package var fallbacks: [SMTPSettings] = []
    /// `SMTP_FALLBACK_RETRY`.
    package var fallbackRetry: Duration = .seconds(300)
    /// `OUTBOX_DIR` (when `transport` is `.outbox`).
    package var outboxDirectory: String?

    /// `OUTBOX_DIR`, which `MAIL_TRANSPORT=outbox` requires: the one place that says so (the
    /// loader, `validateForSending` and the outbox transport ask here).
    package func requireOutboxDirectory() throws(ConfigurationError) -> String {
        guard let directory = outboxDirectory, !directory.isEmpty else {
            throw ConfigurationError(setting: "OUTBOX_DIR", reason: "is required when MAIL_TRANSPORT=outbox")
        }
        return directory
    }

    /// What sending needs beyond loading (the dry run and the reports need none of it): a sender,
    /// the outbox's folder, SMTP's password when it has a user.
    package func validateForSending() throws(ConfigurationError) {
        guard fromEmail != nil else {
            throw ConfigurationError(setting: "FROM_EMAIL", reason: "is required to send mail")
        }
        if transport == .outbox {
            _ = try requireOutboxDirectory()
            return
        }
        if smtp.user != nil, smtp.password == nil {
            throw ConfigurationError(
                setting: "SMTP_PASSWORD",
                reason: "SMTP_USER is set but no password was given (SMTP_PASSWORD, SMTP_PASSWORD_FILE or the smtp-password credential)")
        }
        for (index, relay) in fallbacks.enumerated() where relay.user != nil && relay.password == nil {
            let number = index + 1
            throw ConfigurationError(
                setting: "SMTP_FALLBACK_PASSWORD_\(number)",
                reason: "relay \(number) of SMTP_FALLBACK (\(relay.url)) names a user but no password was given "
                    + "(SMTP_FALLBACK_PASSWORD_\(number), SMTP_FALLBACK_PASSWORD_\(number)_FILE or the smtp-fallback-\(number)-password credential)")
        }
    }
}

extension NotifierConfiguration {
    /// The mail's slice, for the Mail target.
    package var mail: MailSettings {
        MailSettings(fromEmail: fromEmail, fromName: fromName, appName: appName, timeZone: timeZone, thresholdDays: rule.thresholdDays,
                     templateDirectory: templateDirectory, defaultLanguage: defaultLanguage, ack: ack, transport: mailTransport, smtp: smtp, fallbacks: smtpFallbacks, fallbackRetry: smtpFallbackRetry,
                     outboxDirectory: outboxDirectory)
    }
}
