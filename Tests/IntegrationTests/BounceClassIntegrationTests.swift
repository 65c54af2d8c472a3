import Foundation
import Testing
import Values

/// What a permanent refusal says about the address (docs/bounces.md, `BounceClass`), on the real
/// servers: only `5.1.x` makes a contact undeliverable and owes the app `contact.undeliverable`; a
/// full mailbox (`5.2.2`), a spam block (`5.7.1`) or a routing failure (`5.4.4`) marks the alert
/// `bounced` with its code, and the contact stays in use — in a real Postfix relay's reports, in
/// reports of the corpus, and in the SMTP dialogue itself.
@Suite("Bounces: what each class changes", .enabled(if: TestEnvironment.enabled), .serialized)
struct BounceClassIntegrationTests {
    typealias Wire = BounceWireIntegrationTests

    /// The local parts the test SMTP server refuses (scripts/testenv/smtp_server.py), with the
    /// status each refusal carries and its class.
    static let refusals: [(local: String, status: String, bounceClass: BounceClass)] = [
        ("perm550", "5.1.1", .noSuchAddress), ("full552", "5.2.2", .mailbox), ("spam571", "5.7.1", .policy),
        ("route544", "5.4.4", .routing),
    ]

    /// One user whose contacts are `locals`, with the webhook and `BOUNCE_*` on and `overrides`.
    struct Family {
        let db: TestDatabase
        let mail: Mailbox
        let receiver: WebhookReceiver
        let env: [String: String]
        let user: String

        init(_ locals: [String], _ overrides: [String: String?], mail: Mailbox? = nil) throws {
            db = try TestDatabase()
            self.mail = try mail ?? Mailbox()
            let secret = WebhookTransportIntegrationTests.secret()
            receiver = try WebhookReceiver(secret: secret)
            user = try db.addUser(name: "张三", email: self.mail.address("fallback"), checkIns: ["2026-01-10"])
            try LifecycleIntegrationTests.addContacts(db, user, locals.map(self.mail.address))
            var values: [String: String?] = [
                "BOUNCE_ADDRESS": BounceStoreIntegrationTests.address, "BOUNCE_SECRET": BounceStoreIntegrationTests.secret,
                "FOLLOW_UP_DAYS": "1", "ESCALATE_AFTER": "0",
            ]
            values.merge(overrides) { $1 }
            env = try WebhookDeliveryIntegrationTests.environment(db, receiver, secret: secret, values)
        }

        /// Runs the notifier with `arguments`, expecting its exit status to be `status`; returns its standard error.
        @discardableResult
        func run(_ arguments: [String], status: Int32 = 0) throws -> String {
            let result = try NotifierProcess.run(arguments, environment: env)
            #expect(result.status == status, "\(arguments): \(result.stderr.suffix(2000))")
            return result.stderr
        }

        /// (contact's local part, status, bounce_status, bounce_class) of the user's e-mails of `kind`.
        func mails(_ kind: String) throws -> [[String?]] {
            try db.query("""
                SELECT split_part(contact, '@', 1), status, bounce_status, bounce_class FROM notification_logs
                WHERE user_id = $1 AND kind = $2 AND channel = 'email' ORDER BY contact
                """, [user, kind])
        }

        /// The local parts of the contacts marked undeliverable.
        func undeliverable() throws -> [String?] {
            try db.query("SELECT split_part(email, '@', 1) FROM contact_status WHERE user_id = $1 AND status = 'undeliverable' ORDER BY 1",
                         [user]).map { $0[0] }
        }

        /// The contacts (local parts) the app heard of as undeliverable, after a pass that sends what is owed.
        func undeliverableEvents() throws -> [String] {
            try run(["--run-now", "--date", Wire.date])
            return try WebhookDeliveryIntegrationTests.delivered(receiver).filter { $0.type == "contact.undeliverable" }.compactMap {
                (($0.data["contact"] as? [String: Any])?["email"] as? String).map { String($0.prefix { $0 != "@" }) }
            }.sorted()
        }

        /// The streak goes on (docs/bounces.md): the follow-up a day later, then a check-in and its
        /// all-clear. Returns the local parts each went to.
        func laterNotices() throws -> (followUps: [String?], allClears: [String?]) {
            try run(["--run-now", "--date", "2026-01-14"])
            try db.checkIn(user, "2026-01-15")
            try run(["--run-now", "--date", "2026-01-15"])
            return (try mails("follow_up").map { $0[0] }, try mails("all_clear").map { $0[0] })
        }
    }

    @Test("a real Postfix relay's reports: 5.1.1 makes the contact undeliverable and tells the app; 5.2.2, 5.7.1 and 5.4.4 mark the alert bounced with their code, the contacts stay in use, and the streak's follow-up and all-clear still go to them")
    func realRelay() throws {
        try #require(Postfix.isAvailable, "postfix is not installed (scripts/install-deps.sh)")
        let env = try TestEnvironment.require()
        let locals = Self.refusals.map { "\($0.local)-relay" }
        let mail = try Mailbox()
        let relay = try Postfix(relaying: [mail.domain], to: env.plainPort)
        defer { relay.stop() }
        let family = try Family(locals, [
            "SMTP_HOST": "127.0.0.1", "SMTP_PORT": "\(relay.port)", "SMTP_TLS": "none", "SMTP_USER": nil, "SMTP_PASSWORD": nil,
            "SMTP_CA_FILE": nil, "BOUNCE_MAILBOX": "maildir:\(relay.maildir)",
        ], mail: mail)
        try family.run(["--run-now", "--date", Wire.date])
        let accepted = try family.mails("alert")
        #expect(accepted.count == locals.count && accepted.allSatisfy { $0[1] == "sent" }, "the relay said 250 to each: \(accepted)")
        // The next hop refuses each contact; Postfix's bounce(8) writes one report each into the Maildir.
        #expect(try DaemonIntegrationTests.eventually(40) { relay.waiting.count == locals.count }, "\(relay.log)")
        let read = try family.run(["bounces"])
        #expect(read.contains("4 read: 4 bounced"), "\(read)")
        #expect(read.components(separatedBy: "is undeliverable").count == 2, "one contact_undeliverable line: \(read)")

        #expect(try family.mails("alert") == Self.refusals.map { ["\($0.local)-relay", "bounced", $0.status, $0.bounceClass.rawValue] }
            .sorted { $0[0]! < $1[0]! })
        #expect(try family.undeliverable() == ["perm550-relay"])
        let events = try family.db.query("SELECT status_code, bounce_class FROM sileme.bounce_events WHERE kind = 'permanent' ORDER BY 1")
        #expect(events == Self.refusals.map { [$0.status, $0.bounceClass.rawValue] }.sorted { $0[0]! < $1[0]! })
        #expect(try family.undeliverableEvents() == ["perm550-relay"])
        let later = try family.laterNotices()
        #expect(later.followUps == ["full552-relay", "route544-relay", "spam571-relay"])
        #expect(later.allClears == ["full552-relay", "route544-relay", "spam571-relay"])
        #expect(try family.undeliverableEvents() == ["perm550-relay"], "nothing more owed")

        // The history report counts each class per recipient domain (the reports read at 10:00 on the alert's day).
        try family.db.query("UPDATE sileme.bounce_events SET received_at = '2026-01-13 10:00:00+08'")
        let report = try NotifierProcess.run(["report", "--from", "2026-01-12", "--to", Wire.date, "--format", "json"], environment: family.env)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any], "\(report.stderr)")
        let domain = try #require(((json["bounces"] as? [String: Any])?["by_domain"] as? [[String: Any]])?.first)
        #expect(domain["domain"] as? String == mail.domain.lowercased())
        #expect(domain["permanent_by_class"] as? [String: Int]
                == ["no_such_address": 1, "mailbox": 1, "routing": 1, "policy": 1, "system": 0, "protocol": 0, "other": 0], "\(domain)")
    }

    @Test("reports of the corpus, found by their returned Message-ID: Gmail's 5.2.2 and Yahoo's 5.7.9 leave the contact in use; Postfix's 5.1.1 does not")
    func corpus() throws {
        let maildir = try Wire.maildir()
        defer { try? FileManager.default.removeItem(atPath: maildir.path) }
        let family = try Family(["full-corpus", "spam-corpus", "gone-corpus"], ["BOUNCE_MAILBOX": "maildir:\(maildir.path)"])
        try family.run(["--run-now", "--date", Wire.date])
        let sent = try family.db.query("""
            SELECT split_part(contact, '@', 1), contact, message_id FROM notification_logs
            WHERE user_id = $1 AND kind = 'alert' AND channel = 'email'
            """, [family.user])
        let alerts = Dictionary(uniqueKeysWithValues: sent.map { ($0[0]!, (contact: $0[1]!, messageID: $0[2]!)) })
        // Each provider's report as it came, its recipient and returned Message-ID made ours.
        for (index, (file, local, recipient, messageID)) in [
            ("sisimai-rhost-google-05.eml", "full-corpus", "kijitora@google.example.com", "qbddfL3NB0z0D2Ld@smtp-gw1.example.jp"),
            ("sisimai-rhost-yahooinc-01.eml", "spam-corpus", "kijitora@aol.example.jp", "20201113004812.08513C0196A@smtp.example.jp"),
        ].enumerated() {
            let alert = try #require(alerts[local])
            let raw = String(decoding: try BounceMailboxIntegrationTests.corpus(file), as: UTF8.self)
                .replacingOccurrences(of: recipient, with: alert.contact).replacingOccurrences(of: messageID, with: alert.messageID)
            try Wire.deliver(Array(raw.utf8), to: maildir, name: "\(index + 1).M1P1.corpus")
        }
        let gone = try #require(alerts["gone-corpus"])
        let sender = try #require(try family.mail.deliveries().first { $0.recipient == gone.contact }?.mailFrom)
        try Wire.deliver(try Wire.postfixReport(sender: sender, recipient: gone.contact), to: maildir, name: "3.M1P1.corpus")

        let read = try family.run(["bounces"])
        #expect(read.contains("3 read: 3 bounced"), "\(read)")
        #expect(try family.mails("alert") == [["full-corpus", "bounced", "5.2.2", "mailbox"], ["gone-corpus", "bounced", "5.1.1", "no_such_address"],
                                             ["spam-corpus", "bounced", "5.7.9", "policy"]])
        #expect(try family.undeliverable() == ["gone-corpus"])
        #expect(try family.undeliverableEvents() == ["gone-corpus"])
        let later = try family.laterNotices()
        #expect(later.followUps == ["full-corpus", "spam-corpus"] && later.allClears == ["full-corpus", "spam-corpus"], "\(later)")
    }

    @Test("the SMTP dialogue follows the same rule: a 550 5.1.1 at RCPT makes the contact undeliverable; 552 5.2.2, 550 5.7.1 and 550 5.4.4 fail the mail and leave the contact in use")
    func dialogue() throws {
        let locals = Self.refusals.map { "\($0.local)-dialogue" }
        let family = try Family(locals, ["BOUNCE_ADDRESS": nil, "BOUNCE_SECRET": nil])
        // 75: mails failed (docs/interfaces.md).
        try family.run(["--run-now", "--date", Wire.date], status: 75)
        let rows = try family.db.query("""
            SELECT split_part(contact, '@', 1), status, left(last_error, 9) FROM notification_logs
            WHERE user_id = $1 AND kind = 'alert' AND channel = 'email' ORDER BY contact
            """, [family.user])
        let replies = ["perm550": "550 5.1.1", "full552": "552 5.2.2", "spam571": "550 5.7.1", "route544": "550 5.4.4"]
        #expect(rows == locals.sorted().map { [$0, "failed", replies[String($0.prefix { $0 != "-" })]] }, "\(rows)")
        #expect(try family.undeliverable() == ["perm550-dialogue"])
    }
}
