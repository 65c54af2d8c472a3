import Foundation
import Testing
import Values

/// The canary on real servers (docs/operating.md, "The canary"), the daemon a real process: a
/// real Postfix primary delivers the canary into the bounce Maildir the daemon reads, and it comes
/// back with its latency; a fallback Postfix that accepts and silently discards drops its canary,
/// which is lost within `CANARY_WITHIN` — `canary_lost` in the journal, `check` exit 69 naming it.
@Suite("The canary through real relays", .enabled(if: TestEnvironment.enabled))
struct CanaryIntegrationTests {
    @Test("the primary's canary comes back through a real Postfix into the Maildir (back, latency, its check line passes); a fallback that accepts and discards loses its canary: canary_lost naming it, the notifier.canary_lost webhook, check exit 69")
    func backAndLost() throws {
        try #require(Postfix.isAvailable, "postfix is not installed (scripts/install-deps.sh)")
        let env = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        // The primary delivers bounces+canary@notify.sileme.test into its Maildir (recipient_delimiter +).
        let primary = try Postfix(relaying: [mail.domain], to: env.plainPort)
        defer { primary.stop() }
        // A relay that says 250 and drops: its virtual delivery is discard(8).
        let dropping = try Postfix(relaying: [mail.domain], to: env.plainPort, extra: ["virtual_transport = discard"])
        defer { dropping.stop() }
        let fallback = "smtp://127.0.0.1:\(dropping.port)"
        // The operator's webhook hears of the lost canary, signed.
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        let settings = try BounceRelayIntegrationTests.environment(db, [
            "SMTP_HOST": "127.0.0.1", "SMTP_PORT": "\(primary.port)", "SMTP_TLS": "none",
            "SMTP_USER": nil, "SMTP_PASSWORD": nil, "SMTP_CA_FILE": nil,
            "SMTP_FALLBACK": "\(fallback)?tls=none",
            "BOUNCE_MAILBOX": "maildir:\(primary.maildir)",
            "WEBHOOK_URL": receiver.tlsURL, "WEBHOOK_SECRET": secret, "WEBHOOK_CA_FILE": env.caFile, "WEBHOOK_TIMEOUT_SECONDS": "2",
            "CANARY_EVERY": "1h", "CANARY_WITHIN": "20s", "CANARY_ADDRESS": "bounces+canary@notify.sileme.test",
        ])
        // CANARY_WITHIN is 20 s, four of the reader's 5 s polls: a canary that arrives just after one
        // poll is read at the next, however loaded the machine (5 s lost the primary's on CI).
        let daemon = try NotifierProcess.start([], environment: settings)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        func canary(_ relay: String) throws -> [String?] {
            try db.query("""
                SELECT back_at IS NOT NULL, lost_reason, extract(epoch FROM back_at - sent_at)::text
                FROM sileme.canaries WHERE relay = $1 ORDER BY id DESC LIMIT 1
                """, [relay]).first ?? []
        }
        let primaryURL = "smtp://127.0.0.1:\(primary.port)"
        #expect(try DaemonIntegrationTests.eventually(40) { try canary(primaryURL).first == "t" }, "the primary's canary is back: \(primary.log)")
        let back = try canary(primaryURL)
        #expect(back.count == 3 && back[1] == nil && (back[2].flatMap(Double.init) ?? -1) >= 0, "back, not lost, its latency: \(back)")
        #expect(try DaemonIntegrationTests.eventually(60) { try canary(fallback).dropFirst().first == "not_back" },
                "the dropping relay's canary is lost: \(dropping.log)")
        func lost() throws -> [(type: String, data: [String: Any], id: String)] {
            try WebhookDeliveryIntegrationTests.delivered(receiver).filter { $0.type == "notifier.canary_lost" }
        }
        #expect(try DaemonIntegrationTests.eventually(10) { try lost().count == 1 }, "the notifier.canary_lost webhook")
        let event = try lost().first
        #expect(event?.data["relay"] as? String == fallback && event?.data["reason"] as? String == "not_back", "\(String(describing: event))")
        // The canary is removed from the mailbox once recorded (never a bounce, never kept aside).
        let left = (try? FileManager.default.contentsOfDirectory(atPath: primary.maildir + "/new")) ?? []
        #expect(left.isEmpty, "the Maildir is empty: \(left)")
        let check = try NotifierProcess.run(["check"], environment: settings)
        let said = check.stdout + check.stderr
        #expect(check.status == 69, "check fails on the lost canary: \(said)")
        #expect(said.contains("\(fallback)") && said.contains("lost (not_back)"), "\(said)")
        #expect(said.contains("\(primaryURL): 1 sent, 1 back, 0 lost"), "\(said)")
        // The history report's section: a line per relay.
        let report = try NotifierProcess.run(["report"], environment: settings)
        #expect(report.stdout.contains("Canaries (a test message through each relay"), "\(report.stdout)\(report.stderr)")
        #expect(report.stdout.contains("\(primaryURL): 1 sent, 1 back, 0 lost; latency p50"), "\(report.stdout)")
        #expect(report.stdout.contains("\(fallback): 1 sent, 0 back, 1 lost\n"), "\(report.stdout)")
        kill(daemon.0.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        // The journal's event (on standard error when no journal is there): crit, naming the relay.
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: result, minimum: 2)
            let events = entries.filter { $0["NOTIFIER_EVENT"] == "canary_lost" }
            #expect(events.count == 1 && events.first?["RELAY"] == fallback && events.first?["REASON"] == "not_back"
                    && events.first?["PRIORITY"] == "2" && events.first?["MESSAGE_ID"] == "2fa0dc6eef704a3d832e8c9e93d38780", "\(events)")
            #expect(!entries.contains { $0["NOTIFIER_EVENT"] == "canary_lost" && $0["RELAY"] == primaryURL }, "the primary's canary is not lost")
        } else {
            #expect(result.stderr.contains("through relay \(fallback) is lost"), "\(result.stderr.suffix(3000))")
        }
    }

    @Test("over IMAP: the canary comes back through a real Postfix into the Maildir a real Dovecot serves, and the daemon reads it over IMAPS — back with its latency, expunged, check passes")
    func backOverIMAP() throws {
        try #require(Postfix.isAvailable && Dovecot.isAvailable, "postfix or dovecot is not installed (scripts/install-deps.sh)")
        let env = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let relay = try Postfix(relaying: [mail.domain], to: env.plainPort)
        defer { relay.stop() }
        let dovecot = try Dovecot(serving: relay.maildir)
        defer { dovecot.stop() }
        let password = FileManager.default.temporaryDirectory.appendingPathComponent("canary-imap-\(UUID().uuidString)").path
        try dovecot.password.write(toFile: password, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: password) }
        let settings = try BounceRelayIntegrationTests.environment(db, [
            "SMTP_HOST": "127.0.0.1", "SMTP_PORT": "\(relay.port)", "SMTP_TLS": "none",
            "SMTP_USER": nil, "SMTP_PASSWORD": nil, "SMTP_CA_FILE": nil,
            "BOUNCE_MAILBOX": "imaps://\(dovecot.user)@127.0.0.1:\(dovecot.port)/INBOX", "BOUNCE_PASSWORD_FILE": password,
            "BOUNCE_CA_FILE": dovecot.caFile,
            "CANARY_EVERY": "1h", "CANARY_WITHIN": "30s", "CANARY_ADDRESS": "bounces+canary@notify.sileme.test",
        ])
        let daemon = try NotifierProcess.start([], environment: settings)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        let url = "smtp://127.0.0.1:\(relay.port)"
        func canary() throws -> [String?] {
            try db.query("""
                SELECT back_at IS NOT NULL, lost_reason, extract(epoch FROM back_at - sent_at)::text
                FROM sileme.canaries WHERE relay = $1 ORDER BY id DESC LIMIT 1
                """, [url]).first ?? []
        }
        #expect(try DaemonIntegrationTests.eventually(40) { try canary().first == "t" }, "the canary is back over IMAP: \(relay.log)")
        let back = try canary()
        #expect(back.count == 3 && back[1] == nil && (back[2].flatMap(Double.init) ?? -1) >= 0, "back, not lost, its latency: \(back)")
        // Expunged once recorded: nothing left in the Maildir Dovecot serves.
        #expect(try DaemonIntegrationTests.eventually(10) { relay.waiting.isEmpty }, "the mailbox is empty: \(relay.waiting)")
        let check = try NotifierProcess.run(["check"], environment: settings)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect((check.stdout + check.stderr).contains("\(url): 1 sent, 1 back, 0 lost"), "\(check.stdout)\(check.stderr)")
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
    }

    @Test("two daemons on one database send one canary per relay and period between them; it comes back once")
    func twoDaemons() throws {
        try #require(Postfix.isAvailable, "postfix is not installed (scripts/install-deps.sh)")
        let env = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let relay = try Postfix(relaying: [mail.domain], to: env.plainPort)
        defer { relay.stop() }
        let settings = try BounceRelayIntegrationTests.environment(db, [
            "SMTP_HOST": "127.0.0.1", "SMTP_PORT": "\(relay.port)", "SMTP_TLS": "none",
            "SMTP_USER": nil, "SMTP_PASSWORD": nil, "SMTP_CA_FILE": nil,
            "BOUNCE_MAILBOX": "maildir:\(relay.maildir)",
            "CANARY_EVERY": "1h", "CANARY_WITHIN": "30s", "CANARY_ADDRESS": "bounces+canary@notify.sileme.test",
        ])
        let daemons = try (0..<2).map { _ in try NotifierProcess.start([], environment: settings) }
        defer { for daemon in daemons where daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(40) {
            try db.query("SELECT count(*)::text FROM sileme.canaries WHERE back_at IS NOT NULL") == [["1"]]
        }, "\(relay.log)")
        Thread.sleep(forTimeInterval: 3)
        #expect(try db.query("SELECT count(*)::text, count(DISTINCT relay)::text FROM sileme.canaries") == [["1", "1"]],
                "one canary for the relay's period, not one a daemon")
        for daemon in daemons {
            kill(daemon.0.processIdentifier, SIGTERM)
            #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
        }
    }
}
