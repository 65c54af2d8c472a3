import Foundation
import Testing
@testable import Config
import Values

/// `SMTP_FALLBACK` and `SMTP_FALLBACK_RETRY` (docs/configuration.md): each relay a URL with its own
/// TLS and credentials, the rest the primary's; every refusal names the setting and never repeats
/// a password.
@Suite("Fallback relays: configuration")
struct RelayConfigurationTests {
    static func load(_ env: [String: String]) throws(ConfigurationError) -> NotifierConfiguration {
        try ConfigurationLoader(environment: env, filePath: nil).load()
    }

    static func refusal(_ env: [String: String]) -> ConfigurationError? {
        do { _ = try load(env) } catch { return error }
        return nil
    }

    @Test("none by default; the retry 5 minutes")
    func defaults() throws {
        let config = try Self.load([:])
        #expect(config.smtpFallbacks.isEmpty && config.smtpFallbackRetry == .seconds(300))
        #expect(config.mail.relays == [config.smtp])
    }

    @Test("smtp:// with STARTTLS, smtps:// with TLS, tls=none, a user, a CA file, the password by number; the rest is the primary's")
    func relays() throws {
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("relay-ca-\(UUID().uuidString).pem").path
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(toFile: ca, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: ca) }
        let config = try Self.load([
            "SMTP_HOST": "primary.example", "SMTP_TIMEOUT_SECONDS": "12", "SMTP_HELO_NAME": "notify.example.com",
            "SMTP_FALLBACK": "smtps://mailer%40acct@smtp.backup.example,smtp://10.0.0.5:2525?tls=none  smtp://[::1]?ca_file=\(ca)",
            "SMTP_FALLBACK_PASSWORD_1": "s3cret", "SMTP_FALLBACK_RETRY": "90s",
        ])
        let relays = config.smtpFallbacks
        #expect(relays.map(\.url) == ["smtps://smtp.backup.example:465", "smtp://10.0.0.5:2525", "smtp://[::1]:587"])
        #expect(relays.map(\.tls) == [.tls, TLSMode.none, .starttls])
        #expect(relays.map(\.user) == ["mailer@acct", nil, nil])
        #expect(relays[0].password?.value == "s3cret" && relays[1].password == nil)
        #expect(relays.map(\.caFile) == [nil, nil, ca])
        #expect(relays.allSatisfy { $0.timeoutSeconds == 12 && $0.heloName == "notify.example.com" })
        #expect(config.smtpFallbackRetry == .seconds(90))
        #expect(config.mail.relays.map(\.host) == ["primary.example", "smtp.backup.example", "10.0.0.5", "::1"])
    }

    @Test("a password in the URL is refused without being repeated")
    func passwordInURL() {
        let error = Self.refusal(["SMTP_FALLBACK": "smtp://user:hunter2hunter2@relay.example"])
        #expect(error?.setting == "SMTP_FALLBACK" && error?.reason.contains("SMTP_FALLBACK_PASSWORD_1") == true)
        #expect(!"\(error!)".contains("hunter2"))
    }

    @Test("refusals name the setting: not a relay URL, a path, an unknown option, too many, a password for no relay, a bad retry, the outbox")
    func refusals() {
        let cases: [([String: String], String)] = [
            (["SMTP_FALLBACK": "http://relay.example"], "SMTP_FALLBACK"),
            (["SMTP_FALLBACK": "relay.example"], "SMTP_FALLBACK"),
            (["SMTP_FALLBACK": "smtp://relay.example/x"], "SMTP_FALLBACK"),
            (["SMTP_FALLBACK": "smtps://relay.example?tls=none"], "SMTP_FALLBACK"),
            (["SMTP_FALLBACK": "smtp://relay.example?verify=no"], "SMTP_FALLBACK"),
            (["SMTP_FALLBACK": "smtp://relay.example:0"], "SMTP_FALLBACK"),
            (["SMTP_FALLBACK": "smtp://a smtp://b smtp://c smtp://d smtp://e"], "SMTP_FALLBACK"),
            (["SMTP_FALLBACK": "smtp://relay.example?ca_file=/nonexistent.pem"], "SMTP_FALLBACK (relay 1 of SMTP_FALLBACK, ca_file)"),
            (["SMTP_FALLBACK_PASSWORD_2": "x", "SMTP_FALLBACK": "smtp://a"], "SMTP_FALLBACK_PASSWORD_2"),
            (["SMTP_FALLBACK_RETRY": "5"], "SMTP_FALLBACK_RETRY"),
            (["SMTP_FALLBACK_RETRY": "0s"], "SMTP_FALLBACK_RETRY"),
            (["SMTP_FALLBACK_RETRY": "2d"], "SMTP_FALLBACK_RETRY"),
            (["SMTP_FALLBACK": "smtp://a", "MAIL_TRANSPORT": "outbox", "OUTBOX_DIR": "/tmp"], "SMTP_FALLBACK"),
        ]
        for (env, setting) in cases {
            #expect(Self.refusal(env)?.setting == setting, "\(env): \(String(describing: Self.refusal(env)))")
        }
    }

    @Test("sending needs the password of a relay that names a user")
    func passwordForSending() throws {
        let config = try Self.load(["FROM_EMAIL": "n@x.example", "SMTP_FALLBACK": "smtp://u@relay.example"])
        do {
            try ConfigurationLoader.validateForSending(config)
            Issue.record("a relay with a user and no password was accepted")
        } catch {
            #expect(error.setting == "SMTP_FALLBACK_PASSWORD_1")
        }
    }
}
