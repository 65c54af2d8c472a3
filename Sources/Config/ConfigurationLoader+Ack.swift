import Foundation
import Values

extension ConfigurationLoader {
    /// Reads the acknowledgement page's settings into `config` (docs/acknowledgement.md). Every
    /// given setting is checked, even while the others are unset; `config.ack` is set when
    /// `ACK_BASE_URL` or `ACK_LISTEN` is, and then a key of at least 32 characters is required.
    /// The key is never quoted in an error.
    func loadAck(_ values: [String: String], _ settings: SettingsReader, into config: inout NotifierConfiguration) throws(ConfigurationError) {
        let base = try settings.string("ACK_BASE_URL").flatMap { $0.isEmpty ? nil : $0 }
        if let base {
            if let problem = Self.webhookURLProblem(base) {
                throw ConfigurationError(setting: "ACK_BASE_URL", reason: problem)
            }
            guard let parts = URLComponents(string: base), parts.query == nil, parts.fragment == nil else {
                throw ConfigurationError(setting: "ACK_BASE_URL", reason: "must have no query or fragment (the token is appended as a path segment)")
            }
        }
        let listen = try settings.string("ACK_LISTEN").flatMap { (text) throws(ConfigurationError) -> AckSettings.Listen? in
            guard !text.isEmpty else { return nil }
            guard let parsed = AckSettings.Listen(parsing: text) else {
                throw ConfigurationError(setting: "ACK_LISTEN", reason: "must be HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080 (got \"\(text)\")")
            }
            return parsed
        }
        let rate = try settings.integer("ACK_RATE_LIMIT", in: 1...10_000_000)
        let connections = try settings.integer("ACK_MAX_CONNECTIONS", in: 1...1_000_000)
        let sourced = try sourcedSecret(values, key: "ACK_SECRET", credential: "ack-secret")
        if let sourced, sourced.secret.value.utf8.count < 32 {
            throw ConfigurationError(setting: sourced.setting, reason: "must be at least 32 characters (for example `openssl rand -hex 32`)")
        }
        guard base != nil || listen != nil else { return }
        guard let sourced else {
            throw ConfigurationError(setting: "ACK_SECRET", reason: "is required when ACK_BASE_URL or ACK_LISTEN is set "
                                     + "(ACK_SECRET, ACK_SECRET_FILE or the ack-secret credential)")
        }
        var ack = AckSettings(baseURL: base, secret: sourced.secret, listen: listen)
        ack.rateLimitPerMinute = rate ?? ack.rateLimitPerMinute
        ack.maxConnections = connections ?? ack.maxConnections
        config.ack = ack
    }
}
