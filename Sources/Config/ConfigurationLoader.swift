import Foundation
import Rule
import Values

/// Reads the configuration file, the environment and systemd credentials into a
/// `NotifierConfiguration`, refusing anything invalid with a `ConfigurationError`.
///
/// Precedence, lowest first: documented defaults, the configuration file (`KEY=VALUE` lines, the
/// same format systemd's `EnvironmentFile=` reads), environment variables, and for secrets a value
/// given directly over a `*_FILE` path over a credential in `$CREDENTIALS_DIRECTORY`.
package struct ConfigurationLoader: Sendable {
    /// Every setting the file and the environment may hold.
    package static let knownKeys: [String] = [
        "DATABASE_URL", "DATABASE_URL_FILE", "MAIL_TRANSPORT", "OUTBOX_DIR",
        "SMTP_HOST", "SMTP_PORT", "SMTP_USER", "SMTP_PASSWORD", "SMTP_PASSWORD_FILE", "SMTP_TLS",
        "SMTP_CA_FILE", "SMTP_TIMEOUT_SECONDS", "SMTP_RETRY_ATTEMPTS", "SMTP_RETRY_BACKOFF_SECONDS",
        "SMTP_CONNECTIONS", "SMTP_RATE_LIMIT", "SMTP_HELO_NAME",
        "FROM_EMAIL", "FROM_NAME", "APP_NAME",
        "NOTIFY_TIME", "NOTIFY_TIME_ZONE", "MISS_THRESHOLD_DAYS", "CATCH_UP_DAYS", "SUPERSEDE",
        "TEMPLATE_DIR", "DEFAULT_LANGUAGE", "MIGRATIONS_DIR", "HEARTBEAT_URL", "RETRY_LATER_SECONDS",
        "DATABASE_RECONNECT_SECONDS", "CLAIM_LEASE_SECONDS",
        "DATABASE_READ_URL", "DATABASE_READ_URL_FILE", "METRICS_FILE", "RETENTION_DAYS",
        "DATABASE_LISTEN_URL", "DATABASE_LISTEN_URL_FILE", "DATABASE_SCHEMA", "FOLLOW_UP_DAYS", "INTRODUCE_CONTACTS",
        "ALL_CLEAR_POLL_SECONDS",
        "WEBHOOK_URL", "WEBHOOK_SECRET", "WEBHOOK_SECRET_FILE", "WEBHOOK_CA_FILE", "WEBHOOK_TIMEOUT_SECONDS",
        "WEBHOOK_EVENTS", "WEBHOOK_BODY_TEMPLATE", "USER_REMINDER",
        "INTAKE_DROP_RATIO", "INTAKE_MIN_USERS", "HOLD_HOURS",
        "ACK_BASE_URL", "ACK_SECRET", "ACK_SECRET_FILE", "ACK_LISTEN", "ACK_RATE_LIMIT", "ACK_MAX_CONNECTIONS",
    ] + bounceKeys + escalationKeys + relayKeys + canaryKeys

    /// The environment variables read (normally `ProcessInfo.processInfo.environment`).
    package var environment: [String: String]
    /// The configuration file, if any. A missing explicit file is an error.
    package var filePath: String?

    /// Creates a loader over `environment` and an optional configuration file.
    package init(environment: [String: String], filePath: String?) {
        self.environment = environment
        self.filePath = filePath
    }

    /// Reads and validates everything; throws the first problem found.
    package func load() throws(ConfigurationError) -> NotifierConfiguration {
        var values = try fileValues()
        for key in Self.knownKeys {
            if let value = environment[key] { values[key] = value }
        }
        var config = NotifierConfiguration()
        let settings = SettingsReader(values: values)

        config.databaseURL = try secret(values, key: "DATABASE_URL", credential: "database-url") ?? Secret("")
        if let problem = ConnectionString.syntaxProblem(config.databaseURL) {
            throw ConfigurationError(setting: "DATABASE_URL", reason: "is not a valid PostgreSQL URI or connection string: \(problem)")
        }
        config.databaseReadURL = try secret(values, key: "DATABASE_READ_URL", credential: "database-read-url")
        if let read = config.databaseReadURL, let problem = ConnectionString.syntaxProblem(read) {
            throw ConfigurationError(setting: "DATABASE_READ_URL", reason: "is not a valid PostgreSQL URI or connection string: \(problem)")
        }
        config.databaseListenURL = try secret(values, key: "DATABASE_LISTEN_URL", credential: "database-listen-url")
        if let listen = config.databaseListenURL, let problem = ConnectionString.syntaxProblem(listen) {
            throw ConfigurationError(setting: "DATABASE_LISTEN_URL", reason: "is not a valid PostgreSQL URI or connection string: \(problem)")
        }
        if let schema = try settings.string("DATABASE_SCHEMA"), !schema.isEmpty {
            config.databaseSchema = try DatabaseSchema(schema)
        }
        if let transport = try settings.string("MAIL_TRANSPORT"), !transport.isEmpty {
            guard let kind = MailTransportKind(rawValue: transport.lowercased()) else {
                throw ConfigurationError(setting: "MAIL_TRANSPORT", reason: "must be smtp or outbox (got \"\(transport)\")")
            }
            config.mailTransport = kind
        }
        if let dir = try settings.string("OUTBOX_DIR"), !dir.isEmpty {
            try requireDirectory(dir, setting: "OUTBOX_DIR")
            config.outboxDirectory = dir
        }
        if config.mailTransport == .outbox { _ = try config.requireOutboxDirectory() }
        config.smtp.host = try settings.string("SMTP_HOST") ?? config.smtp.host
        if config.smtp.host.isEmpty || config.smtp.host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw ConfigurationError(setting: "SMTP_HOST", reason: "must be a host name or address")
        }
        if let mode = try settings.string("SMTP_TLS") {
            guard let tls = TLSMode(rawValue: mode.lowercased()) else {
                throw ConfigurationError(setting: "SMTP_TLS", reason: "must be starttls, tls or none (got \"\(mode)\")")
            }
            config.smtp.tls = tls
        }
        config.smtp.port = try settings.integer("SMTP_PORT", in: 1...65535) ?? config.smtp.tls.defaultPort
        config.smtp.user = try settings.string("SMTP_USER").flatMap { $0.isEmpty ? nil : $0 }
        config.smtp.password = try secret(values, key: "SMTP_PASSWORD", credential: "smtp-password")
        config.smtp.caFile = try settings.certificateFile("SMTP_CA_FILE")
        config.smtp.timeoutSeconds = try settings.integer("SMTP_TIMEOUT_SECONDS", in: 1...600) ?? config.smtp.timeoutSeconds
        config.smtp.retryAttempts = try settings.integer("SMTP_RETRY_ATTEMPTS", in: 1...20) ?? config.smtp.retryAttempts
        config.smtp.retryBackoffSeconds = try settings.number("SMTP_RETRY_BACKOFF_SECONDS", in: 0...600) ?? config.smtp.retryBackoffSeconds
        config.smtp.connections = try settings.integer("SMTP_CONNECTIONS", in: 1...64) ?? config.smtp.connections
        config.smtp.rateLimit = try settings.number("SMTP_RATE_LIMIT", in: 0.01...100_000)
        if let helo = try settings.string("SMTP_HELO_NAME"), !helo.isEmpty {
            guard HostName.isDomain(helo) || HostName.isAddressLiteral(helo) else {
                throw ConfigurationError(setting: "SMTP_HELO_NAME",
                                         reason: "must be a domain name or an address literal such as [192.0.2.1] (got \"\(helo)\")")
            }
            config.smtp.heloName = helo
        } else {
            config.smtp.heloName = HostName.fullyQualified
        }

        if let from = try settings.string("FROM_EMAIL"), !from.isEmpty {
            do { config.fromEmail = try EmailAddress(validating: from).address } catch {
                throw ConfigurationError(setting: "FROM_EMAIL", reason: "not a valid address: \(error.reason)")
            }
        }
        if let name = try settings.string("FROM_NAME") { config.fromName = name }
        if let app = try settings.string("APP_NAME") { config.appName = app }

        if let time = try settings.string("NOTIFY_TIME") {
            guard let parsed = TimeOfDay(parsing: time) else {
                throw ConfigurationError(setting: "NOTIFY_TIME", reason: "must be HH:MM or HH:MM:SS on a 24-hour clock (got \"\(time)\")")
            }
            config.notifyTime = parsed
        }
        if let zone = try settings.string("NOTIFY_TIME_ZONE") {
            guard let parsed = TimeZone(identifier: zone), zone.contains("/") || zone == "UTC" else {
                throw ConfigurationError(setting: "NOTIFY_TIME_ZONE", reason: "unknown IANA time zone \"\(zone)\"")
            }
            config.timeZone = parsed
        }
        let threshold = try settings.integer("MISS_THRESHOLD_DAYS", in: 1...365) ?? config.rule.thresholdDays
        let catchUp = try settings.integer("CATCH_UP_DAYS", in: 0...365) ?? config.rule.catchUpDays
        let supersede = try settings.onOff("SUPERSEDE") ?? config.rule.supersede
        config.rule = MissRule(thresholdDays: threshold, catchUpDays: catchUp, supersede: supersede)
        config.followUpDays = try settings.integer("FOLLOW_UP_DAYS", in: 0...365) ?? config.followUpDays
        config.introduceContacts = try settings.onOff("INTRODUCE_CONTACTS") ?? config.introduceContacts
        config.allClearPollSeconds = try settings.number("ALL_CLEAR_POLL_SECONDS", in: 1...3600) ?? config.allClearPollSeconds
        if let days = try settings.integer("RETENTION_DAYS", in: 0...36500), days > 0 {
            // The rule reads notification rows back to the oldest due check-in, and the follow-ups
            // back to their alerts: keep those.
            let needed = threshold + catchUp + config.followUpDays + 2
            guard days >= needed else {
                throw ConfigurationError(setting: "RETENTION_DAYS", reason: "must be 0 (keep everything) or at least \(needed) "
                                         + "(MISS_THRESHOLD_DAYS + CATCH_UP_DAYS + FOLLOW_UP_DAYS + 2), so that no row the rule still reads is deleted (got \(days))")
            }
            config.retentionDays = days
        }
        if let path = try settings.string("METRICS_FILE"), !path.isEmpty {
            let folder = (path as NSString).deletingLastPathComponent
            guard path.hasPrefix("/"), !path.hasSuffix("/") else {
                throw ConfigurationError(setting: "METRICS_FILE", reason: "must be an absolute file path (got \"\(path)\")")
            }
            try requireDirectory(folder.isEmpty ? "/" : folder, setting: "METRICS_FILE")
            config.metricsFile = path
        }

        if let dir = try settings.string("TEMPLATE_DIR"), !dir.isEmpty {
            try requireDirectory(dir, setting: "TEMPLATE_DIR")
            config.templateDirectory = dir
        }
        if let text = try settings.string("DEFAULT_LANGUAGE"), !text.isEmpty {
            // Whether templates exist in it is the templates' question (MailTemplates), asked
            // where they are loaded; here only whether it names a language at all.
            guard let tag = LanguageTag(text) else {
                throw ConfigurationError(setting: "DEFAULT_LANGUAGE", reason: "\"\(text)\" is not a language tag (like zh-Hans, zh-Hant, en)")
            }
            config.defaultLanguage = tag
        }
        if let dir = try settings.string("MIGRATIONS_DIR"), !dir.isEmpty {
            try requireDirectory(dir, setting: "MIGRATIONS_DIR")
            config.migrationsDirectory = dir
        }
        config.retryLaterSeconds = try settings.number("RETRY_LATER_SECONDS", in: 1...86400) ?? config.retryLaterSeconds
        config.databaseReconnectSeconds = try settings.number("DATABASE_RECONNECT_SECONDS", in: 0...3600)
            ?? config.databaseReconnectSeconds
        config.claimLeaseSeconds = try settings.number("CLAIM_LEASE_SECONDS", in: 2...3600) ?? config.claimLeaseSeconds
        config.intakeGuard = IntakeGuard(
            dropRatio: try settings.number("INTAKE_DROP_RATIO", in: 0...1) ?? config.intakeGuard.dropRatio,
            minUsers: try settings.integer("INTAKE_MIN_USERS", in: 1...100_000_000) ?? config.intakeGuard.minUsers,
            holdHours: try settings.number("HOLD_HOURS", in: 0.001...720) ?? config.intakeGuard.holdHours)
        if let url = try settings.string("HEARTBEAT_URL"), !url.isEmpty {
            guard url.hasPrefix("https://") || url.hasPrefix("http://"), !url.contains(where: \.isWhitespace) else {
                throw ConfigurationError(setting: "HEARTBEAT_URL", reason: "must be an http:// or https:// URL")
            }
            config.heartbeatURL = url
        }
        try loadWebhook(values, settings, into: &config)
        try loadAck(values, settings, into: &config)
        try loadBounce(values, settings, into: &config)
        try loadEscalation(settings, into: &config)
        try loadRelays(values, settings, into: &config)
        try loadCanary(values, settings, into: &config)
        return config
    }

    /// Checks what sending mail needs beyond `load()`: a sender address; for SMTP a password when a
    /// user is set, for the outbox its folder.
    package static func validateForSending(_ config: NotifierConfiguration) throws(ConfigurationError) {
        try config.mail.validateForSending()
    }

    private func fileValues() throws(ConfigurationError) -> [String: String] {
        guard let filePath else { return [:] }
        let text: String
        do { text = try String(contentsOfFile: filePath, encoding: .utf8) } catch {
            throw ConfigurationError(setting: filePath, reason: "cannot read the configuration file")
        }
        var values: [String: String] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let location = "\(filePath):\(index + 1)"
            guard let eq = line.firstIndex(of: "=") else {
                throw ConfigurationError(setting: location, reason: "expected KEY=VALUE")
            }
            var key = line[..<eq].trimmingCharacters(in: .whitespaces)
            if key.hasPrefix("export ") { key = String(key.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
            guard Self.knownKeys.contains(key) else {
                throw ConfigurationError(setting: key.isEmpty ? location : key, reason: "unknown setting (at \(location))")
            }
            values[key] = Self.unquote(line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces))
        }
        return values
    }

    /// Removes one level of matching single or double quotes, as systemd's EnvironmentFile does.
    package static func unquote(_ value: String) -> String {
        guard value.count >= 2, let first = value.first, first == value.last, first == "\"" || first == "'" else {
            return value
        }
        return String(value.dropFirst().dropLast())
    }

    private func secret(_ values: [String: String], key: String, credential: String) throws(ConfigurationError) -> Secret? {
        try sourcedSecret(values, key: key, credential: credential)?.secret
    }

    /// A secret and the setting it came from (`KEY`, `KEY_FILE` or `credential NAME`), so that a
    /// refusal of its value names the place the operator has to fix.
    func sourcedSecret(_ values: [String: String], key: String, credential: String)
        throws(ConfigurationError) -> (secret: Secret, setting: String)? {
        if let direct = values[key], !direct.isEmpty { return (Secret(direct), key) }
        if let path = values["\(key)_FILE"], !path.isEmpty {
            return (Secret(try readSecretFile(path, setting: "\(key)_FILE")), "\(key)_FILE")
        }
        if let dir = environment["CREDENTIALS_DIRECTORY"], !dir.isEmpty {
            let path = (dir as NSString).appendingPathComponent(credential)
            if FileManager.default.fileExists(atPath: path) {
                return (Secret(try readSecretFile(path, setting: "credential \(credential)")), "credential \(credential)")
            }
        }
        return nil
    }

    private func readSecretFile(_ path: String, setting: String) throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(setting: setting, reason: "cannot read \(path)")
        }
        // A trailing newline is an artefact of `echo`, never part of the secret.
        var value = text
        while let last = value.last, last == "\n" || last == "\r" { value.removeLast() }
        guard !value.isEmpty else { throw ConfigurationError(setting: setting, reason: "\(path) is empty") }
        return value
    }

    private func requireDirectory(_ path: String, setting: String) throws(ConfigurationError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConfigurationError(setting: setting, reason: "\(path) is not a directory")
        }
    }
}
