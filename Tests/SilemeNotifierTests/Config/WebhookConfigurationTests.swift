import Foundation
import Testing
@testable import Config
@testable import Values

/// The webhook settings and `USER_REMINDER`: defaults, every source of the secret, every refusal
/// naming its setting, and neither the secret nor the URL's key quoted in any of them.
@Suite("Webhook configuration")
struct WebhookConfigurationTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let url = "https://hooks.example.com/sileme?key=Url-Key-4711"

    static func load(_ env: [String: String]) throws(ConfigurationError) -> NotifierConfiguration {
        try ConfigurationLoader(environment: env, filePath: nil).load()
    }

    static func refusal(_ env: [String: String]) -> ConfigurationError? {
        do { _ = try load(env); return nil } catch { return error }
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-conf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("off by default; on with a URL and a secret, every other setting at its documented default")
    func defaults() throws {
        let off = try Self.load([:])
        #expect(off.webhook == nil && off.userReminder == false)
        let on = try #require(try Self.load(["WEBHOOK_URL": Self.url, "WEBHOOK_SECRET": Self.secret]).webhook)
        #expect(on.url.value == Self.url && on.timeoutSeconds == 10 && on.caFile == nil && on.bodyTemplate == nil)
        #expect(on.events == Set(WebhookEventType.selectable) && on.events.count == 12)
        #expect(on.sends(.ping) && on.sends(.reminder))
        #expect(on.signingKey == (try WebhookSettings.SigningKey(secret: Secret(Self.secret))))
        #expect(on.displayURL == "https://hooks.example.com/sileme")
    }

    @Test("every setting read: timeout, events, CA file, template, USER_REMINDER")
    func everySetting() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let ca = folder.appendingPathComponent("ca.pem").path
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(toFile: ca, atomically: true, encoding: .utf8)
        let template = folder.appendingPathComponent("body.mustache").path
        try #"{"n": "{{user_name}}"}"#.write(toFile: template, atomically: true, encoding: .utf8)
        let c = try Self.load(["WEBHOOK_URL": "http://127.0.0.1:8080/hook", "WEBHOOK_SECRET": Self.secret, "WEBHOOK_TIMEOUT_SECONDS": "3",
                               "WEBHOOK_EVENTS": " checkin.alert, CHECKIN.REMINDER ,checkin.alert", "WEBHOOK_CA_FILE": ca,
                               "WEBHOOK_BODY_TEMPLATE": template, "USER_REMINDER": "ON"])
        let webhook = try #require(c.webhook)
        #expect(webhook.timeoutSeconds == 3 && webhook.caFile == ca && webhook.bodyTemplate?.path == template)
        #expect(webhook.events == [.alert, .reminder])
        #expect(!webhook.sends(.allClear) && webhook.sends(.ping))
        #expect(c.userReminder)
    }

    @Test("the secret from WEBHOOK_SECRET, WEBHOOK_SECRET_FILE and the webhook-secret credential, in that order")
    func secretSources() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = "whsec_" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        try "\(Self.secret)\n".write(to: folder.appendingPathComponent("webhook-secret"), atomically: true, encoding: .utf8)
        let file = folder.appendingPathComponent("secret-file").path
        try other.write(toFile: file, atomically: true, encoding: .utf8)
        let svix = try WebhookSettings.SigningKey(secret: Secret(Self.secret))
        let credential = try Self.load(["WEBHOOK_URL": Self.url, "CREDENTIALS_DIRECTORY": folder.path]).webhook?.signingKey
        #expect(credential == svix)
        let fromFile = try Self.load(["WEBHOOK_URL": Self.url, "CREDENTIALS_DIRECTORY": folder.path, "WEBHOOK_SECRET_FILE": file]).webhook
        #expect(fromFile?.signingKey.bytes == Array(0..<32))
        let direct = try Self.load(["WEBHOOK_URL": Self.url, "WEBHOOK_SECRET_FILE": file, "WEBHOOK_SECRET": Self.secret]).webhook
        #expect(direct?.signingKey == svix)
    }

    @Test("each bad value refused naming the setting; the secret and the URL's key never in the message")
    func refusals() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let badSecret = "whsec_Not-Base64-Secret-9z9z9z9z9z9z"
        let shortSecret = "whsec_" + Data("Short-Secret-Key".utf8).base64EncodedString()
        try badSecret.write(to: folder.appendingPathComponent("webhook-secret"), atomically: true, encoding: .utf8)
        let badFile = folder.appendingPathComponent("bad").path
        try shortSecret.write(toFile: badFile, atomically: true, encoding: .utf8)
        let on = ["WEBHOOK_URL": Self.url, "WEBHOOK_SECRET": Self.secret]
        let cases: [(String, [String: String])] = [
            ("WEBHOOK_URL", ["WEBHOOK_URL": "ftp://hooks.example.com/x?key=Url-Key-4711", "WEBHOOK_SECRET": Self.secret]),
            ("WEBHOOK_URL", ["WEBHOOK_URL": "hooks.example.com/x?key=Url-Key-4711"]),
            ("WEBHOOK_URL", ["WEBHOOK_URL": "https:///x?key=Url-Key-4711"]),
            ("WEBHOOK_URL", ["WEBHOOK_URL": "https://hooks example.com/?key=Url-Key-4711"]),
            ("WEBHOOK_URL", ["WEBHOOK_URL": "https://hooks.example.com:70000/?key=Url-Key-4711"]),
            ("WEBHOOK_URL", ["WEBHOOK_URL": "https://例子.中国/?key=Url-Key-4711"]),
            ("WEBHOOK_URL", ["WEBHOOK_URL": "https://hooks.example.com/?key=Url-Key-4711\nX: 1"]),
            ("WEBHOOK_SECRET", ["WEBHOOK_URL": Self.url]),
            ("WEBHOOK_SECRET", ["WEBHOOK_URL": Self.url, "WEBHOOK_SECRET": badSecret]),
            ("WEBHOOK_SECRET", ["WEBHOOK_SECRET": badSecret]),
            ("WEBHOOK_SECRET_FILE", ["WEBHOOK_URL": Self.url, "WEBHOOK_SECRET_FILE": badFile]),
            ("WEBHOOK_SECRET_FILE", ["WEBHOOK_URL": Self.url, "WEBHOOK_SECRET_FILE": folder.path]),
            ("credential webhook-secret", ["WEBHOOK_URL": Self.url, "CREDENTIALS_DIRECTORY": folder.path]),
            ("WEBHOOK_TIMEOUT_SECONDS", on.merging(["WEBHOOK_TIMEOUT_SECONDS": "0"]) { $1 }),
            ("WEBHOOK_TIMEOUT_SECONDS", on.merging(["WEBHOOK_TIMEOUT_SECONDS": "10s"]) { $1 }),
            ("WEBHOOK_TIMEOUT_SECONDS", on.merging(["WEBHOOK_TIMEOUT_SECONDS": "301"]) { $1 }),
            ("WEBHOOK_EVENTS", on.merging(["WEBHOOK_EVENTS": "checkin.alert,checkin.alarm"]) { $1 }),
            ("WEBHOOK_EVENTS", on.merging(["WEBHOOK_EVENTS": "ping"]) { $1 }),
            ("WEBHOOK_EVENTS", on.merging(["WEBHOOK_EVENTS": "checkin.alert,"]) { $1 }),
            ("WEBHOOK_EVENTS", ["WEBHOOK_EVENTS": "alert"]),
            ("WEBHOOK_CA_FILE", on.merging(["WEBHOOK_CA_FILE": badFile]) { $1 }),
            ("WEBHOOK_CA_FILE", on.merging(["WEBHOOK_CA_FILE": folder.path + "/missing.pem"]) { $1 }),
            ("WEBHOOK_BODY_TEMPLATE", on.merging(["WEBHOOK_BODY_TEMPLATE": folder.path + "/missing.mustache"]) { $1 }),
            ("USER_REMINDER", ["USER_REMINDER": "yes"]),
            ("USER_REMINDER", ["USER_REMINDER": "on"]),
            ("USER_REMINDER", on.merging(["USER_REMINDER": "on", "WEBHOOK_EVENTS": "checkin.alert"]) { $1 }),
        ]
        for (setting, env) in cases {
            let error = Self.refusal(env)
            #expect(error?.setting == setting, "\(env): \(error.map { "\($0)" } ?? "accepted")")
            let words = error.map { "\($0)" } ?? ""
            for secret in ["Url-Key-4711", "Not-Base64", "MfKQ9r8G", "Short-Secret", Data("Short-Secret-Key".utf8).base64EncodedString()] {
                #expect(!words.contains(secret), "\(words)")
            }
        }
    }

    @Test("the settings print neither the secret nor the URL")
    func printed() throws {
        let c = try Self.load(["WEBHOOK_URL": Self.url, "WEBHOOK_SECRET": Self.secret])
        for text in ["\(c)", String(reflecting: c), "\(c.webhook!)", String(reflecting: c.webhook!)] {
            #expect(!text.contains("MfKQ9r8G") && !text.contains("Url-Key-4711"), "\(text)")
        }
    }

    @Test("the URL as logs show it: no userinfo, query or fragment")
    func displayURL() {
        #expect(WebhookSettings.displayURL("https://u:p@hooks.example.com:8443/a/b?key=1#f") == "https://hooks.example.com:8443/a/b")
        #expect(WebhookSettings.displayURL("http://[::1]:8080/hook") == "http://[::1]:8080/hook")
        #expect(WebhookSettings.displayURL("not a url") == "<invalid URL>")
    }
}
