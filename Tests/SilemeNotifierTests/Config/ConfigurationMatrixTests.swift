import Foundation
import Testing
import TestSupport
@testable import Config
@testable import Mail
@testable import Webhook

/// Issue 6's configuration matrix at the loader: every setting the loader knows given a wrong type,
/// an out-of-range or otherwise invalid value, a typo of its key in the file, and missing or
/// unreadable secret files and credentials (`BadSetting.all`) — each refused before anything is
/// touched, with a `ConfigurationError` naming the setting (exit 78 in the executable, see
/// `ConfigurationIntegrationTests`), from the environment and from the configuration file.
@Suite("Configuration matrix")
struct ConfigurationMatrixTests {
    static let cases = BadSetting.all(keys: ConfigurationLoader.knownKeys)
    /// A configuration that starts: the only setting sending needs.
    static let base = ["FROM_EMAIL": "noreply@sileme.app"]
    /// The settings read with a numeric range.
    static let ranged = ["SMTP_PORT", "SMTP_TIMEOUT_SECONDS", "SMTP_RETRY_ATTEMPTS", "SMTP_RETRY_BACKOFF_SECONDS",
                         "SMTP_CONNECTIONS", "SMTP_RATE_LIMIT", "NOTIFY_TIME", "MISS_THRESHOLD_DAYS", "CATCH_UP_DAYS",
                         "RETRY_LATER_SECONDS", "CLAIM_LEASE_SECONDS", "RETENTION_DAYS", "FOLLOW_UP_DAYS",
                         "ALL_CLEAR_POLL_SECONDS", "WEBHOOK_TIMEOUT_SECONDS", "INTAKE_DROP_RATIO", "INTAKE_MIN_USERS", "HOLD_HOURS",
                         "ACK_RATE_LIMIT", "ACK_MAX_CONNECTIONS", "BOUNCE_POLL_SECONDS", "ESCALATE_AFTER",
                         "CANARY_EVERY", "CANARY_WITHIN"]

    /// What a run checks before it touches anything: the configuration, what sending needs, the
    /// templates and the sender. Nil when all of it passes.
    static func startupError(environment: [String: String], file: String?) -> ConfigurationError? {
        do {
            let configuration = try ConfigurationLoader(environment: environment, filePath: file).load()
            try ConfigurationLoader.validateForSending(configuration)
            _ = try MailComposer(configuration.mail, templates: MailTemplates(directory: configuration.templateDirectory))
            try WebhookBodyTemplate.check(configuration.webhook, appName: configuration.appName)
            return nil
        } catch {
            return error
        }
    }

    @Test("the table covers every setting: an invalid value, a range where there is one, a typo of the key, bad secret files and credentials")
    func coverage() {
        for key in ConfigurationLoader.knownKeys {
            #expect(Self.cases.contains { $0.setting == key && $0.kind != .unknownKey }, "a bad value for \(key)")
            #expect(Self.cases.contains { $0.setting == BadSetting.typo(key) && $0.kind == .unknownKey }, "a typo of \(key)")
        }
        for key in Self.ranged { #expect(Self.cases.contains { $0.setting == key && $0.kind == .outOfRange }, "out of range: \(key)") }
        for setting in ["DATABASE_URL_FILE", "SMTP_PASSWORD_FILE", "credential smtp-password", "credential database-url",
                        "WEBHOOK_SECRET_FILE", "credential webhook-secret"] {
            #expect(Self.cases.filter { $0.setting == setting && $0.kind == .unreadableFile }.count >= 3, "unreadable: \(setting)")
        }
        print("Configuration matrix: \(Self.cases.count) cases over \(ConfigurationLoader.knownKeys.count) settings and 3 credentials "
              + "(\(Self.cases.filter { !$0.fileOnly }.count) from the environment, \(Self.cases.filter { !$0.environmentOnly }.count) "
              + "from the file)")
    }

    @Test("refused from the environment, naming the setting", arguments: cases.filter { !$0.fileOnly })
    func fromEnvironment(_ bad: BadSetting) throws {
        var environment = Self.base
        for key in bad.unset { environment[key] = nil }
        environment.merge(bad.values) { $1 }
        Self.expectRefused(bad, Self.startupError(environment: environment, file: nil))
    }

    @Test("refused from the configuration file, naming the setting", arguments: cases.filter { !$0.environmentOnly })
    func fromFile(_ bad: BadSetting) throws {
        let path = BadSetting.fixtures.directory + "/\(UUID().uuidString).conf"
        try BadSetting.fileText(bad.values).write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var environment = Self.base
        for key in bad.unset + Array(bad.values.keys) { environment[key] = nil }
        Self.expectRefused(bad, Self.startupError(environment: environment, file: path))
    }

    /// The refusal names `bad.setting`.
    static func expectRefused(_ bad: BadSetting, _ error: ConfigurationError?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.setting == bad.setting, "\(bad): \(error.map { "\($0)" } ?? "accepted")", sourceLocation: sourceLocation)
        #expect(error?.description.contains(bad.setting) == true, sourceLocation: sourceLocation)
    }
}
