import Foundation
import Testing
@testable import Values
@testable import Rule
@testable import Config

@Suite("ConfigurationLoader")
struct ConfigurationLoaderTests {
    func load(_ env: [String: String], file: String? = nil) throws(ConfigurationError) -> NotifierConfiguration {
        var path: String?
        if let file {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("sn-\(UUID().uuidString).conf").path
            _ = FileManager.default.createFile(atPath: path!, contents: Data(file.utf8))
        }
        return try ConfigurationLoader(environment: env, filePath: path).load()
    }

    func error(_ env: [String: String], file: String? = nil) -> ConfigurationError? {
        do { _ = try load(env, file: file); return nil } catch { return error }
    }

    @Test("defaults are the documented ones")
    func defaults() throws {
        let c = try load([:])
        #expect(c.timeZone.identifier == "Asia/Shanghai")
        #expect(c.notifyTime == TimeOfDay(hour: 9, minute: 0))
        #expect(c.rule == MissRule(thresholdDays: 2, catchUpDays: 7))
        #expect(c.smtp.tls == .starttls)
        #expect(c.smtp.port == 587)
        #expect(c.fromName == "一键打卡团队")
        #expect(c.databaseURL.value == "")
    }

    @Test("the file is read and the environment overrides it")
    func precedence() throws {
        let file = """
            # comment
            SMTP_HOST=mail.example.com
            SMTP_TLS=tls
            FROM_EMAIL="noreply@sileme.app"
            export MISS_THRESHOLD_DAYS=3
            FROM_NAME='一键打卡 团队'
            """
        let c = try load(["SMTP_HOST": "relay.local", "CATCH_UP_DAYS": "0"], file: file)
        #expect(c.smtp.host == "relay.local")
        #expect(c.smtp.tls == .tls)
        #expect(c.smtp.port == 465)
        #expect(c.smtp.url == "smtps://relay.local:465")
        #expect(c.fromEmail == "noreply@sileme.app")
        #expect(c.fromName == "一键打卡 团队")
        #expect(c.rule == MissRule(thresholdDays: 3, catchUpDays: 0))
    }

    @Test("every invalid setting is refused with its name",
          arguments: [("SMTP_PORT", "abc"), ("SMTP_PORT", "70000"), ("SMTP_TLS", "maybe"), ("NOTIFY_TIME", "25:00"),
                      ("NOTIFY_TIME", "9am"), ("NOTIFY_TIME_ZONE", "Mars/Olympus"), ("MISS_THRESHOLD_DAYS", "0"),
                      ("CATCH_UP_DAYS", "-1"), ("FROM_EMAIL", "not an address"), ("SMTP_TIMEOUT_SECONDS", "0"),
                      ("SMTP_CONNECTIONS", "1000"), ("SMTP_RETRY_BACKOFF_SECONDS", "nan"), ("SMTP_CA_FILE", "/nonexistent/ca.pem"),
                      ("TEMPLATE_DIR", "/nonexistent"), ("SMTP_HOST", "a b")])
    func invalid(key: String, value: String) throws {
        let failure = try #require(error([key: value]))
        #expect(failure.setting == key)
        #expect(failure.description.contains(key))
    }

    @Test("an unknown key in the file is refused, naming it")
    func unknownKey() throws {
        let failure = try #require(error([:], file: "SMTP_HOSTT=x\n"))
        #expect(failure.setting == "SMTP_HOSTT")
        #expect(try #require(error([:], file: "just words\n")).reason.contains("KEY=VALUE"))
    }

    @Test("secrets come from the value, a _FILE, or a systemd credential, and never print")
    func secrets() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cred-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try "from-credential\n".write(to: dir.appendingPathComponent("smtp-password"), atomically: true, encoding: .utf8)
        try "from-file\n".write(to: dir.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        #expect(try load(["CREDENTIALS_DIRECTORY": dir.path]).smtp.password?.value == "from-credential")
        #expect(try load(["CREDENTIALS_DIRECTORY": dir.path, "SMTP_PASSWORD_FILE": dir.appendingPathComponent("pw").path]).smtp.password?.value == "from-file")
        let direct = try load(["SMTP_PASSWORD": "hunter2", "DATABASE_URL": "postgresql://u:pw-in-url@h/db"])
        #expect(direct.smtp.password?.value == "hunter2")
        #expect("\(direct.smtp.password!)" == "<redacted>")
        #expect(!"\(direct.databaseURL)".contains("pw-in-url"))
        let unreadable = try #require(error(["SMTP_PASSWORD_FILE": "/nonexistent/pw"]))
        #expect(unreadable.setting == "SMTP_PASSWORD_FILE")
    }

    @Test("sending needs FROM_EMAIL, and a password when a user is set")
    func sendingRequirements() throws {
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.validateForSending(try load([:])) }
        let userOnly = try load(["FROM_EMAIL": "a@b.co", "SMTP_USER": "u"])
        #expect { try ConfigurationLoader.validateForSending(userOnly) } throws: { ($0 as? ConfigurationError)?.setting == "SMTP_PASSWORD" }
        try ConfigurationLoader.validateForSending(try load(["FROM_EMAIL": "a@b.co", "SMTP_USER": "u", "SMTP_PASSWORD": "p"]))
    }

    @Test("the example configuration file loads and lists only known settings")
    func exampleFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("config/notifier.conf.example").path
        let c = try ConfigurationLoader(environment: [:], filePath: path).load()
        #expect(c.fromEmail != nil)
    }
}
