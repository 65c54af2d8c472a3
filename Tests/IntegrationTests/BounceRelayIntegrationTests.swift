import Bounce
import Config
import Foundation
import Testing
import Values

/// The bounces as a real service meets them, the daemon a real process throughout: a real Postfix
/// relay that says `250`, then cannot deliver, and delivers its own report into the Maildir the
/// daemon reads; the daemon reading a private IMAP server verified with `BOUNCE_CA_FILE`, where
/// what is not a report of ours changes nothing and is kept; and a mailbox that hangs or refuses,
/// which neither holds up an alert or an all-clear nor a stop.
@Suite("Bounces through a real relay and a private mailbox", .enabled(if: TestEnvironment.enabled))
struct BounceRelayIntegrationTests {
    /// A signed tag's address for a row that does not exist (the tag verifies; the row is unknown).
    static let unknownRow: Int64 = 987_654_321

    /// The daemon's settings with `BOUNCE_*` set and `overrides` (a nil value removes a variable).
    static func environment(_ db: TestDatabase, _ overrides: [String: String?]) throws -> [String: String] {
        var values: [String: String?] = [
            "BOUNCE_ADDRESS": BounceStoreIntegrationTests.address, "BOUNCE_SECRET": BounceStoreIntegrationTests.secret,
            "BOUNCE_POLL_SECONDS": "5", "ALL_CLEAR_POLL_SECONDS": "1",
        ]
        values.merge(overrides) { $1 }
        return try NotifierProcess.environment(database: db, values)
    }

    /// A user due now, so that the daemon started next alerts at once (its catch-up), and the
    /// `NOTIFY_TIME` that makes it so.
    static func dueUser(_ db: TestDatabase, _ mail: Mailbox, local: String) throws -> (user: String, contact: String, notifyTime: String) {
        let fire = DaemonIntegrationTests.localTime(offset: -3600)
        let user = try DaemonIntegrationTests.addDueUsers(db, mail, today: fire.date, count: 1, local: local)[0]
        return (user, mail.address("\(local)1"), fire.time)
    }

    @Test("a real Postfix relay accepts the alert, its next hop answers 550, its DSN lands in the Maildir: within BOUNCE_POLL_SECONDS the daemon marks the row bounced, the contact undeliverable, logs the event and tells the app by the signed contact.undeliverable webhook")
    func realRelay() throws {
        try #require(Postfix.isAvailable, "postfix is not installed (scripts/install-deps.sh)")
        let env = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let due = try Self.dueUser(db, mail, local: "perm550-relay")
        let relay = try Postfix(relaying: [mail.domain], to: env.plainPort)
        defer { relay.stop() }
        // The app's webhook hears of the dead address, signed (the receiver checks the HMAC).
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        // The notifier sends through the relay as a real service does: plain SMTP to a local Postfix.
        let settings = try Self.environment(db, [
            "SMTP_HOST": "127.0.0.1", "SMTP_PORT": "\(relay.port)", "SMTP_TLS": "none",
            "SMTP_USER": nil, "SMTP_PASSWORD": nil, "SMTP_CA_FILE": nil,
            "BOUNCE_MAILBOX": "maildir:\(relay.maildir)", "NOTIFY_TIME": due.notifyTime,
            "WEBHOOK_URL": receiver.tlsURL, "WEBHOOK_SECRET": secret, "WEBHOOK_CA_FILE": env.caFile,
            "WEBHOOK_TIMEOUT_SECONDS": "2",
        ])
        let daemon = try NotifierProcess.start([], environment: settings)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        // The alert's mail: the user's webhook events (the alert's, the dead address's, the
        // escalation its bounce brings at once) have rows of their own.
        func status() throws -> String? {
            try db.query("SELECT status FROM notification_logs WHERE user_id = $1 AND kind = 'alert' AND channel = 'email'", [due.user]).first?.first ?? nil
        }

        // The relay said 250: the row is sent, and only the relay knows better.
        #expect(try DaemonIntegrationTests.eventually(30) { try status() != nil }, "the daemon's catch-up sent the alert")
        let accepted = Date()
        // Postfix relays it to the sink, which refuses the contact after the relay had accepted it.
        #expect(try DaemonIntegrationTests.eventually(30) { try mail.events().contains { $0.address == due.contact && $0.code == 550 } },
                "the next hop refused the contact: \(relay.log)")
        // Its report reaches the Maildir and the daemon's next poll (every 5 s) reads it.
        #expect(try DaemonIntegrationTests.eventually(40) { try status() == "bounced" }, "\(relay.log)")
        let took = Date().timeIntervalSince(accepted)
        // The bounce wakes the daemon's pass, which sends the app the signed event.
        func undeliverable() throws -> [(type: String, data: [String: Any], id: String)] {
            try WebhookDeliveryIntegrationTests.delivered(receiver).filter { $0.type == "contact.undeliverable" }
        }
        #expect(try DaemonIntegrationTests.eventually(20) { try !undeliverable().isEmpty }, "the contact.undeliverable event")
        kill(daemon.0.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")

        let row = try db.query("SELECT status, email_sent::text, bounce_status, bounce_diagnostic FROM notification_logs WHERE user_id = $1 AND kind = 'alert' AND channel = 'email'", [due.user])
        #expect(row.first?[0] == "bounced" && row.first?[1] == "true" && row.first?[2] == "5.1.1", "\(row)")
        #expect(row.first?[3]?.contains("550 5.1.1") == true, "Postfix's Diagnostic-Code, the next hop's words: \(row)")
        #expect(try db.query("SELECT status FROM contact_status WHERE user_id = $1", [due.user]) == [["undeliverable"]])
        #expect(try db.query("SELECT kind, domain FROM sileme.bounce_events") == [["permanent", mail.domain.lowercased()]])
        #expect(relay.waiting.isEmpty && Maildir(path: relay.maildir).unparsedCount() == 0, "the report removed after its effect")
        #expect(relay.log.contains("status=bounced") && relay.log.contains("delivered to maildir"), "\(relay.log)")
        // Postfix's delivery and retry timing plus one poll: within two polls of the acceptance.
        #expect(took < 5 * 2 + 10, "bounced \(took) s after the relay accepted the alert")
        print("relay bounce: row bounced \(String(format: "%.1f", took)) s after the relay accepted the alert (BOUNCE_POLL_SECONDS=5)")

        // The journal's event (on standard error when no journal is there).
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: result, minimum: 2)
            let events = entries.filter { $0["NOTIFIER_EVENT"] == "contact_undeliverable" }
            #expect(events.count == 1 && events.first?["USER_ID"] == due.user && events.first?["BOUNCE_STATUS"] == "5.1.1", "\(events)")
            #expect(events.first?["RECIPIENT"] == EmailMasking.mask(due.contact))
        } else {
            #expect(result.stderr.contains("undeliverable"), "\(result.stderr.suffix(2000))")
        }
        // The app heard of it once, signed, naming the user, the dead address and the relay's words.
        let events = try undeliverable()
        #expect(events.count == 1, "\(events.map(\.data))")
        #expect(events.first?.data["user_id"] as? String == due.user)
        #expect((events.first?.data["contact"] as? [String: Any])?["email"] as? String == due.contact)
        let bounce = events.first?.data["bounce"] as? [String: Any]
        #expect(bounce?["status"] as? String == "5.1.1" && bounce?["notification_kind"] as? String == "alert", "\(String(describing: bounce))")
        #expect(try receiver.received().allSatisfy(\.verified), "every request signed")
    }

    @Test("the daemon reads a private IMAP server verified with BOUNCE_CA_FILE: the tagged report applied and expunged; a 5 MB message, a forged and an unknown tag, an out-of-office reply, a non-report and another system's DSN change nothing, each kept and counted")
    func privateIMAP() throws {
        try #require(Dovecot.isAvailable, "dovecot-imapd is not installed (scripts/install-deps.sh)")
        let alerted = try BounceWireIntegrationTests.Alerted("private")
        defer { alerted.remove() }
        let dovecot = try Dovecot()
        defer { dovecot.stop() }
        let folder = "/var/tmp/sn-bounce-pw-" + UUID().uuidString.lowercased().prefix(8)
        try dovecot.password.write(toFile: folder, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let report = try BounceWireIntegrationTests.postfixReport(sender: alerted.sender, recipient: alerted.contact)
        let at = try #require(alerted.sender.firstIndex(of: "@"))
        let last = alerted.sender[alerted.sender.index(before: at)]
        let forged = alerted.sender.replacingOccurrences(of: "\(last)@", with: "\(last == "a" ? "b" : "a")@")
        let unknown = BounceStoreIntegrationTests.tags.envelopeSender(row: Self.unknownRow)
        let large = report + Array("\r\n".utf8) + [UInt8](repeating: 0x41, count: 5 << 20)
        let others: [(String, [UInt8])] = [
            ("large", large),
            ("forged", try BounceWireIntegrationTests.postfixReport(sender: forged, recipient: alerted.contact)),
            ("unknown", try BounceWireIntegrationTests.postfixReport(sender: unknown, recipient: alerted.contact)),
            ("out-of-office", try BounceMailboxIntegrationTests.corpus("sisimai-rfc3834-01.eml")),
            ("not a report", try BounceMailboxIntegrationTests.corpus("sisimai-is-not-bounce-01.eml")),
            ("another system's", try BounceMailboxIntegrationTests.corpus("sisimai-crlf-lhost-postfix-01.eml")),
        ]
        for (index, other) in others.enumerated() { try dovecot.deliver(other.1, name: "\(index + 1).M1P1.\(other.0.prefix(3))") }
        try dovecot.deliver(report, name: "9.M1P1.report")
        let before = try alerted.row()

        var env = alerted.env
        env["BOUNCE_MAILBOX"] = "imaps://\(dovecot.user)@127.0.0.1:\(dovecot.port)/INBOX"
        env["BOUNCE_PASSWORD_FILE"] = folder
        env["BOUNCE_POLL_SECONDS"] = "5"
        // The notify time far from now: this daemon only reads the mailbox.
        env["NOTIFY_TIME"] = DaemonIntegrationTests.localTime(offset: 3 * 3600).time

        // Without the server's certificate authority the daemon refuses the server and goes on.
        let refused = try NotifierProcess.start([], environment: env)
        Thread.sleep(forTimeInterval: 3)
        kill(refused.0.processIdentifier, SIGTERM)
        let refusal = NotifierProcess.finish(refused.0, refused.1, refused.2)
        #expect(refusal.status == 0)
        #expect(try alerted.row() == before, "an unverified server is not read")
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: refusal, minimum: 2)
            #expect(entries.contains { $0["NOTIFIER_EVENT"] == "bounce_mailbox_unavailable" }, "the unverified server reported")
        } else {
            #expect(refusal.stderr.contains("cannot read the bounce mailbox"), "\(refusal.stderr.suffix(1500))")
        }

        env["BOUNCE_CA_FILE"] = dovecot.caFile
        let daemon = try NotifierProcess.start([], environment: env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(30) { try alerted.row().first?.first == "bounced" })
        let mailbox = try BounceMailboxIntegrationTests.mailbox(dovecot)
        #expect(try DaemonIntegrationTests.eventually(15) { try mailbox.list().isEmpty && mailbox.unparsedCount() == others.count },
                "the report expunged, the others kept with the keyword")
        kill(daemon.0.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        #expect(try alerted.db.query("SELECT status FROM contact_status WHERE user_id = $1", [alerted.user]) == [["undeliverable"]])
        // One event for the report; the unmatched reports (forged, unknown, another system's) recorded as such.
        let events = try alerted.db.query("SELECT kind, count(*)::text FROM sileme.bounce_events GROUP BY kind ORDER BY kind")
        #expect(events == [["permanent", "1"], ["unmatched", "3"]], "\(events)")
        #expect(try alerted.db.query("SELECT count(*)::text FROM notification_logs WHERE status = 'bounced'") == [["1"]])
        #expect(try mailbox.unparsedCount() == others.count, "nothing deleted but the applied report")
    }

    @Test("a mailbox that hangs (IMAP) or refuses (POP3): the daemon still alerts and sends the all-clear, and a SIGTERM ends it in seconds, not the transfer's 30 s", arguments: ["imaps", "pop3s"])
    func unreachableMailbox(scheme: String) throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let due = try Self.dueUser(db, mail, local: "unreachable-\(scheme)")
        let silent = try SilentServer()
        // IMAP: a server that completes the handshake and never says a word; POP3: a closed port.
        let port = scheme == "imaps" ? silent.port : try PostgresCluster.freePort()
        let env = try Self.environment(db, [
            "BOUNCE_MAILBOX": "\(scheme)://bounces@127.0.0.1:\(port)" + (scheme == "imaps" ? "/INBOX" : ""),
            "BOUNCE_PASSWORD": "Mailbox-pw-4711", "NOTIFY_TIME": due.notifyTime,
        ])
        let daemon = try NotifierProcess.start([], environment: env)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(30) { try mail.deliveries().count == 1 }, "the alert goes out")
        try db.checkIn(due.user, DaemonIntegrationTests.localTime(offset: 0).date.description)
        #expect(try DaemonIntegrationTests.eventually(30) { try mail.deliveries().count == 2 }, "the all-clear goes out")
        #expect(try db.logs(due.user).map(\.status) == ["sent", "sent"])
        Thread.sleep(forTimeInterval: 1)
        let stopping = Date()
        kill(daemon.0.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        let took = Date().timeIntervalSince(stopping)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        #expect(took < 5, "stopped in \(took) s")
        if scheme == "pop3s", TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: result, minimum: 2)
            #expect(entries.contains { $0["NOTIFIER_EVENT"] == "bounce_mailbox_unavailable" })
        }
        withExtendedLifetime(silent) {}
    }
}
