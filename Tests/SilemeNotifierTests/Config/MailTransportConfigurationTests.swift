import Foundation
import Testing
@testable import Config
@testable import Mail

@Suite("MAIL_TRANSPORT and OUTBOX_DIR")
struct MailTransportConfigurationTests {
    let existing = FileManager.default.temporaryDirectory.path

    func load(_ env: [String: String]) throws(ConfigurationError) -> NotifierConfiguration {
        try ConfigurationLoader(environment: env, filePath: nil).load()
    }

    func error(_ env: [String: String]) -> ConfigurationError? {
        do { _ = try load(env); return nil } catch { return error }
    }

    @Test("SMTP is the default and needs no outbox")
    func defaults() throws {
        let c = try load([:])
        #expect(c.mailTransport == .smtp)
        #expect(c.outboxDirectory == nil)
        #expect(c.mail.transportDescription == "SMTP smtp://localhost:587 (starttls)")
    }

    @Test("outbox with an existing folder loads; SMTP settings are not needed to send")
    func outbox() throws {
        let c = try load(["MAIL_TRANSPORT": "Outbox", "OUTBOX_DIR": existing, "FROM_EMAIL": "a@b.co", "SMTP_USER": "u"])
        #expect(c.mailTransport == .outbox)
        #expect(c.outboxDirectory == existing)
        #expect(c.mail.transportDescription == "outbox \(existing)")
        // SMTP_USER without a password would stop an SMTP run; the outbox does not use it.
        try ConfigurationLoader.validateForSending(c)
        #expect(try c.mail.makeMailTransport() is OutboxTransport)
        // FROM_EMAIL is still required: it is the From: header of the files.
        var noSender = c
        noSender.fromEmail = nil
        #expect { try ConfigurationLoader.validateForSending(noSender) } throws: { ($0 as? ConfigurationError)?.setting == "FROM_EMAIL" }
    }

    @Test("bad transport settings are refused with the setting named",
          arguments: [(["MAIL_TRANSPORT": "pigeon"], "MAIL_TRANSPORT"),
                      (["MAIL_TRANSPORT": "outbox"], "OUTBOX_DIR"),
                      (["MAIL_TRANSPORT": "outbox", "OUTBOX_DIR": ""], "OUTBOX_DIR"),
                      (["MAIL_TRANSPORT": "outbox", "OUTBOX_DIR": "/nonexistent/outbox"], "OUTBOX_DIR"),
                      (["MAIL_TRANSPORT": "outbox", "OUTBOX_DIR": "/etc/passwd"], "OUTBOX_DIR"),
                      (["OUTBOX_DIR": "/nonexistent/outbox"], "OUTBOX_DIR")])
    func invalid(env: [String: String], setting: String) throws {
        let failure = try #require(error(env))
        #expect(failure.setting == setting)
    }

    @Test("a configuration built in code with the outbox but no folder cannot send")
    func validateForSending() {
        var c = NotifierConfiguration()
        c.fromEmail = "a@b.co"
        c.mailTransport = .outbox
        #expect { try ConfigurationLoader.validateForSending(c) } throws: { ($0 as? ConfigurationError)?.setting == "OUTBOX_DIR" }
        #expect { _ = try c.mail.makeMailTransport() } throws: { ($0 as? ConfigurationError)?.setting == "OUTBOX_DIR" }
    }

    @Test("both settings are known keys of the configuration file")
    func knownKeys() {
        #expect(ConfigurationLoader.knownKeys.contains("MAIL_TRANSPORT"))
        #expect(ConfigurationLoader.knownKeys.contains("OUTBOX_DIR"))
    }
}
