import Foundation
import Testing
@testable import Config
import Values

/// The bounce settings (docs/bounces.md): off by default, each mailbox form read, the
/// key and password from every source, and neither ever quoted in a refusal. (Each refusal's
/// setting is in the configuration matrix, `BadSetting`.)
@Suite("Bounce configuration")
struct BounceConfigurationTests {
    static let secret = "bounce-key-0123456789abcdef0123456789"
    static let on = ["BOUNCE_ADDRESS": "bounces@notify.example.com", "BOUNCE_SECRET": secret, "BOUNCE_MAILBOX": "maildir:/var/mail/bounces"]

    static func load(_ env: [String: String]) throws(ConfigurationError) -> NotifierConfiguration {
        try ConfigurationLoader(environment: env, filePath: nil).load()
    }

    static func refusal(_ env: [String: String]) -> ConfigurationError? {
        do { _ = try load(env); return nil } catch { return error }
    }

    @Test("off unless BOUNCE_ADDRESS is set; on with a Maildir, polled every 60 s")
    func defaults() throws {
        #expect(try Self.load([:]).bounce == nil)
        let bounce = try #require(try Self.load(Self.on).bounce)
        #expect(bounce.address.address == "bounces@notify.example.com" && bounce.secret.value == Self.secret)
        #expect(bounce.mailbox == .maildir(path: "/var/mail/bounces") && bounce.password == nil && bounce.pollSeconds == 60)
        #expect(try Self.load(Self.on.merging(["BOUNCE_POLL_SECONDS": "5"]) { $1 }).bounce?.pollSeconds == 5)
    }

    @Test("IMAP and POP3 mailboxes: TLS by default ports, plain only on loopback, the folder INBOX unless named")
    func servers() throws {
        func mailbox(_ text: String) throws -> BounceSettings.Mailbox? {
            try Self.load(Self.on.merging(["BOUNCE_MAILBOX": text, "BOUNCE_PASSWORD": "pw"]) { $1 }).bounce?.mailbox
        }
        #expect(try mailbox("imaps://bounces@mail.example.com/INBOX")
            == .imap(.init(host: "mail.example.com", port: 993, user: "bounces", tls: .tls, folder: "INBOX")))
        #expect(try mailbox("imaps://bounces%40notify.example.com@mail.example.com:1993")
            == .imap(.init(host: "mail.example.com", port: 1993, user: "bounces@notify.example.com", tls: .tls, folder: "INBOX")))
        #expect(try mailbox("IMAP://b@127.0.0.1:1143/Bounces")
            == .imap(.init(host: "127.0.0.1", port: 1143, user: "b", tls: .none, folder: "Bounces")))
        #expect(try mailbox("pop3s://b@[::1]") == .pop3(.init(host: "::1", port: 995, user: "b", tls: .tls, folder: "")))
        #expect(try mailbox("pop3://b@localhost:1110") == .pop3(.init(host: "localhost", port: 1110, user: "b", tls: .none, folder: "")))
        #expect(try mailbox("imaps://bounces%40notify.example.com@mail.example.com:1993")?.description
            == "imaps://bounces%40notify.example.com@mail.example.com:1993/INBOX")
    }

    @Test("BOUNCE_CA_FILE: a readable PEM file verifies the IMAP or POP3 server; unset, the system's store")
    func certificateAuthority() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bounce-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pem = folder.appendingPathComponent("ca.pem").path
        try "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".write(toFile: pem, atomically: true, encoding: .utf8)
        let imap = Self.on.merging(["BOUNCE_MAILBOX": "imaps://bounces@mail.example.com/INBOX", "BOUNCE_PASSWORD": "pw"]) { $1 }
        #expect(try Self.load(imap).bounce?.caFile == nil)
        #expect(try Self.load(imap.merging(["BOUNCE_CA_FILE": pem]) { $1 }).bounce?.caFile == pem)
        let missing = Self.refusal(imap.merging(["BOUNCE_CA_FILE": folder.appendingPathComponent("none.pem").path]) { $1 })
        #expect(missing?.setting == "BOUNCE_CA_FILE")
        #expect(Self.refusal(Self.on.merging(["BOUNCE_CA_FILE": pem]) { $1 })?.setting == "BOUNCE_CA_FILE", "a Maildir has no server")
    }

    @Test("the key and the password from the value, a _FILE, or a systemd credential")
    func secretSources() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bounce-conf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "\(Self.secret)-file\n".write(to: folder.appendingPathComponent("key"), atomically: true, encoding: .utf8)
        try "mailbox-pw-file\n".write(to: folder.appendingPathComponent("pw"), atomically: true, encoding: .utf8)
        try "\(Self.secret)-credential".write(to: folder.appendingPathComponent("bounce-secret"), atomically: true, encoding: .utf8)
        try "mailbox-pw-credential".write(to: folder.appendingPathComponent("bounce-password"), atomically: true, encoding: .utf8)
        let imap = ["BOUNCE_ADDRESS": "bounces@notify.example.com", "BOUNCE_MAILBOX": "imaps://bounces@mail.example.com/INBOX"]
        let files = try #require(try Self.load(imap.merging(["BOUNCE_SECRET_FILE": folder.appendingPathComponent("key").path,
                                                             "BOUNCE_PASSWORD_FILE": folder.appendingPathComponent("pw").path]) { $1 }).bounce)
        #expect(files.secret.value == "\(Self.secret)-file" && files.password?.value == "mailbox-pw-file")
        let credentials = try #require(try Self.load(imap.merging(["CREDENTIALS_DIRECTORY": folder.path]) { $1 }).bounce)
        #expect(credentials.secret.value == "\(Self.secret)-credential" && credentials.password?.value == "mailbox-pw-credential")
    }

    @Test("no refusal quotes the key, the password, or a password written into the mailbox URL")
    func nothingSecretPrinted() {
        let pw = "Mailbox-Pw-4711"
        let refusals = [
            Self.refusal(Self.on.merging(["BOUNCE_MAILBOX": "imaps://u:\(pw)@mail.example.com/INBOX", "BOUNCE_PASSWORD": pw]) { $1 }),
            Self.refusal(Self.on.merging(["BOUNCE_MAILBOX": "imap://u:\(pw)@mail.example.com/INBOX"]) { $1 }),
            Self.refusal(Self.on.merging(["BOUNCE_PASSWORD": pw]) { $1 }),
            Self.refusal(Self.on.merging(["BOUNCE_SECRET": "short-\(pw)"]) { $1 }),
            Self.refusal(["BOUNCE_SECRET": Self.secret]),
        ]
        for refusal in refusals {
            let text = refusal.map { "\($0)" } ?? "accepted"
            #expect(refusal != nil && !text.contains(pw) && !text.contains(Self.secret), "\(text)")
        }
        let settings = try? Self.load(Self.on.merging(["BOUNCE_MAILBOX": "pop3s://u@mail.example.com", "BOUNCE_PASSWORD": pw]) { $1 }).bounce
        #expect(settings.map { "\($0)" }?.contains(pw) == false)
        #expect(settings.map { "\($0)" }?.contains(Self.secret) == false)
    }
}
