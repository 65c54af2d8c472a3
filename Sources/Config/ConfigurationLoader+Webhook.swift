import Foundation
import Values

extension ConfigurationLoader {
    /// Reads the webhook settings and `USER_REMINDER` into `config`. Every webhook setting that is
    /// given is checked, even while `WEBHOOK_URL` is unset, so that a mistake shows before the
    /// channel is turned on; `config.webhook` is set only when `WEBHOOK_URL` is.
    ///
    /// Neither the secret nor the URL (whose userinfo or query may hold a key) is ever quoted in
    /// an error.
    func loadWebhook(_ values: [String: String], _ settings: SettingsReader, into config: inout NotifierConfiguration) throws(ConfigurationError) {
        let url = try settings.string("WEBHOOK_URL").flatMap { $0.isEmpty ? nil : $0 }
        if let url, let problem = Self.webhookURLProblem(url) {
            throw ConfigurationError(setting: "WEBHOOK_URL", reason: "\(problem) (the value is not shown: it may hold a key)")
        }
        var key: WebhookSettings.SigningKey?
        if let sourced = try sourcedSecret(values, key: "WEBHOOK_SECRET", credential: "webhook-secret") {
            do { key = try WebhookSettings.SigningKey(secret: sourced.secret) } catch {
                throw ConfigurationError(setting: sourced.setting, reason: error.description)
            }
        }
        let caFile = try settings.certificateFile("WEBHOOK_CA_FILE")
        let timeout = try settings.integer("WEBHOOK_TIMEOUT_SECONDS", in: 1...300)
        let events = try Self.webhookEvents(settings.string("WEBHOOK_EVENTS"))
        let template = try settings.string("WEBHOOK_BODY_TEMPLATE").flatMap { (path) throws(ConfigurationError) in
            path.isEmpty ? nil : try WebhookSettings.BodyTemplate(path: path)
        }
        config.userReminder = try settings.onOff("USER_REMINDER") ?? false

        if let url {
            guard let key else {
                throw ConfigurationError(setting: "WEBHOOK_SECRET", reason: "is required when WEBHOOK_URL is set "
                                         + "(WEBHOOK_SECRET, WEBHOOK_SECRET_FILE or the webhook-secret credential)")
            }
            var webhook = WebhookSettings(url: Secret(url), signingKey: key)
            webhook.caFile = caFile
            webhook.timeoutSeconds = timeout ?? webhook.timeoutSeconds
            webhook.events = events ?? webhook.events
            webhook.bodyTemplate = template
            config.webhook = webhook
        }
        if config.userReminder {
            guard let webhook = config.webhook else {
                throw ConfigurationError(setting: "USER_REMINDER", reason: "on needs WEBHOOK_URL: the reminder goes to the app over the webhook only")
            }
            guard webhook.sends(.reminder) else {
                throw ConfigurationError(setting: "USER_REMINDER", reason: "on needs \(WebhookEventType.reminder.rawValue) in WEBHOOK_EVENTS")
            }
        }
    }

    /// Why `url` cannot be a webhook endpoint, in words that do not quote it; nil when it can.
    static func webhookURLProblem(_ url: String) -> String? {
        guard url.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            return "must be a URL in ASCII without spaces (an international domain name as punycode)"
        }
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "must be an http:// or https:// URL"
        }
        guard let host = parts.host, !host.isEmpty else { return "must name a host" }
        if let port = parts.port, !(1...65535).contains(port) { return "has a port outside 1-65535" }
        return nil
    }

    /// `WEBHOOK_EVENTS`: comma-separated event types; nil (all of them) when unset or empty.
    static func webhookEvents(_ text: String?) throws(ConfigurationError) -> Set<WebhookEventType>? {
        guard let text, !text.isEmpty else { return nil }
        var events = Set<WebhookEventType>()
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard let type = WebhookEventType(rawValue: trimmed.lowercased()), type != .ping else {
                throw ConfigurationError(setting: "WEBHOOK_EVENTS", reason: "unknown event type \"\(trimmed)\"; the types are "
                                         + WebhookEventType.selectable.map(\.rawValue).joined(separator: ", "))
            }
            events.insert(type)
        }
        return events
    }
}
