import Bounce
import Config
import Delivery
import Foundation
import Logging
import Testing
import Values

/// The bounces wired end to end (docs/bounces.md) on the real servers: the real Postfix report of a dead mailbox, put into the Maildir as the MTA
/// would deliver it to that tagged address, is read by `sileme-notifier bounces` — the row
/// `bounced`, the contact `undeliverable`, the message removed, a second reading applying nothing;
/// a forged tag, an out-of-office reply and a message that is no report change nothing and are
/// kept aside, counted.
@Suite("Bounces wired end to end", .enabled(if: TestEnvironment.enabled))
struct BounceWireIntegrationTests {
    static let date = BounceStoreIntegrationTests.date

    /// A fresh Maildir of the test's own (with its `.Unparsed` folder).
    static func maildir() throws -> Maildir {
        let maildir = Maildir(path: "/var/tmp/sn-bounces-" + UUID().uuidString.lowercased().prefix(8))
        try maildir.create()
        return maildir
    }

    /// Delivers `bytes` into the Maildir's `new/` as an MTA does (written in `tmp/`, then renamed).
    static func deliver(_ bytes: [UInt8], to maildir: Maildir, name: String) throws {
        let temporary = "\(maildir.path)/tmp/\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: temporary))
        try FileManager.default.moveItem(atPath: temporary, toPath: "\(maildir.path)/new/\(name)")
    }

    /// The real Postfix report of a `550 5.1.1`, its addresses rewritten to `sender` (the tagged
    /// envelope sender the SMTP server recorded) and `recipient` (the contact).
    static func postfixReport(sender: String, recipient: String) throws -> [UInt8] {
        let raw = String(decoding: try BounceMailboxIntegrationTests.corpus("postfix-permanent-550.eml"), as: UTF8.self)
        return Array(raw.replacingOccurrences(of: "bounces+7k3mq2xw9d8f1a@notify.sileme.test", with: sender)
            .replacingOccurrences(of: "perm550@gone.example", with: recipient).utf8)
    }

    static func files(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }
    }

    /// One user with one contact, alerted on `date` with `BOUNCE_*` set: the database, the test's
    /// mailbox and Maildir, the settings, the contact, the user, and the envelope sender the SMTP
    /// server recorded. `remove()` removes the Maildir.
    struct Alerted {
        let db: TestDatabase
        let mail: Mailbox
        let maildir: Maildir
        var env: [String: String]
        let contact: String
        let user: String
        let sender: String

        init(_ local: String) throws {
            db = try TestDatabase()
            mail = try Mailbox()
            maildir = try BounceWireIntegrationTests.maildir()
            env = try BounceStoreIntegrationTests.environment(db, maildir: maildir.path)
            contact = mail.address(local)
            user = try db.addUser(name: local, email: contact, checkIns: ["2026-01-10"])
            let run = try NotifierProcess.run(["--run-now", "--date", BounceWireIntegrationTests.date], environment: env)
            guard run.status == 0, let sender = try mail.deliveries().first?.mailFrom else { throw TestFailure("the alert was not sent: \(run.stderr)") }
            self.sender = sender
        }

        func remove() { try? FileManager.default.removeItem(atPath: maildir.path) }

        /// The user's delivery row: its status and when it bounced.
        func row() throws -> [[String?]] {
            try db.query("SELECT status, bounced_at::text FROM notification_logs WHERE user_id = $1", [user])
        }
    }

    @Test("the real Postfix report to the tagged sender: the row bounced with status and diagnostic, the contact undeliverable, the message removed; the same report again applies nothing")
    func permanentBounce() throws {
        let alerted = try Alerted("gone")
        defer { alerted.remove() }
        let (db, mail, maildir, env, contact, user) = (alerted.db, alerted.mail, alerted.maildir, alerted.env, alerted.contact, alerted.user)
        let sender = alerted.sender
        #expect(try db.query("SELECT status FROM contact_status WHERE user_id = $1", [user]) == [["ok"]])

        let report = try Self.postfixReport(sender: sender, recipient: contact)
        try Self.deliver(report, to: maildir, name: "1795773667.V801I1M1.relay")
        // As the least-privilege role of config/least-privilege.sql: its grants are enough.
        let restricted = try InfrastructureIntegrationTests.restrictedRole(db)
        defer { restricted.drop() }
        var asRole = env
        asRole["DATABASE_URL"] = restricted.url
        let first = try NotifierProcess.run(["bounces"], environment: asRole)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("1 read: 1 bounced, 0 noted, 1 removed, 0 unmatched, 0 kept aside"), "\(first.stderr)")
        let row = try db.query("""
            SELECT status, email_sent::text, bounce_status, bounce_diagnostic, (bounced_at IS NOT NULL)::text, bounced_at::text
            FROM notification_logs WHERE user_id = $1
            """, [user])
        try #require(row.count == 1)
        #expect(row[0][0] == "bounced" && row[0][1] == "true" && row[0][2] == "5.1.1" && row[0][4] == "true")
        #expect(row[0][3]?.hasPrefix("smtp; 550 5.1.1 <\(contact)>: Recipient address rejected") == true, "\(row[0][3] ?? "nil")")
        #expect(try db.query("SELECT status, last_reply FROM contact_status WHERE user_id = $1 AND email = $2", [user, contact])
                .map { $0[0] } == ["undeliverable"])
        #expect(try db.query("SELECT kind, domain, log_id IS NOT NULL FROM sileme.bounce_events") == [["permanent", mail.domain, "t"]])
        #expect(Self.files("\(maildir.path)/new").isEmpty && Self.files("\(maildir.path)/cur").isEmpty)
        #expect(maildir.unparsedCount() == 0)
        #expect(first.stderr.contains("undeliverable"), "the journal's contact_undeliverable (on stderr without a journal)")
        #expect(!first.stderr.contains(contact), "the contact's address is masked in the log")

        // The same report again (a crash between the commit and the removal): nothing changes.
        try Self.deliver(report, to: maildir, name: "1795773667.V801I1M1.relay")
        let second = try NotifierProcess.run(["bounces"], environment: asRole)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("1 read: 0 bounced, 0 noted, 1 removed"), "\(second.stderr)")
        #expect(try db.query("SELECT bounced_at::text FROM notification_logs WHERE user_id = $1", [user]) == [[row[0][5]]])
        #expect(try db.query("SELECT count(*)::text FROM sileme.bounce_events") == [["1"]])
        #expect(Self.files("\(maildir.path)/new").isEmpty)

        // Nothing is resent: the next day's run owes this streak no alert, and the row stays bounced.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: env).status == 0)
        #expect(try db.query("SELECT notification_date::text, status FROM notification_logs WHERE user_id = $1 AND kind = 'alert'", [user])
                == [[Self.date, "bounced"]])
    }

    @Test("a forged tag, an out-of-office reply and a message that is no report: nothing changes, each kept aside and counted")
    func keptAside() throws {
        let alerted = try Alerted("alive")
        defer { alerted.remove() }
        let (db, maildir, env, contact, user, sender) = (alerted.db, alerted.maildir, alerted.env, alerted.contact, alerted.user, alerted.sender)
        let before = try alerted.row()
        let statusBefore = try db.query("SELECT status, last_reply, updated_at::text FROM contact_status WHERE user_id = $1", [user])

        // The tag with its last character changed: a stranger's attempt to mark the contact dead.
        let last = sender[sender.index(before: try #require(sender.firstIndex(of: "@")))]
        let forged = sender.replacingOccurrences(of: "\(last)@", with: "\(last == "a" ? "b" : "a")@")
        try Self.deliver(try Self.postfixReport(sender: forged, recipient: contact), to: maildir, name: "1.M1P1.relay")
        try Self.deliver(try BounceMailboxIntegrationTests.corpus("sisimai-rfc3834-01.eml"), to: maildir, name: "2.M1P1.relay")
        try Self.deliver(try BounceMailboxIntegrationTests.corpus("sisimai-is-not-bounce-01.eml"), to: maildir, name: "3.M1P1.relay")
        let result = try NotifierProcess.run(["bounces"], environment: env)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("3 read: 0 bounced, 0 noted, 0 removed, 1 unmatched, 3 kept aside"), "\(result.stderr)")
        #expect(try alerted.row() == before)
        #expect(try db.query("SELECT status, last_reply, updated_at::text FROM contact_status WHERE user_id = $1", [user]) == statusBefore)
        #expect(try db.query("SELECT kind, log_id FROM sileme.bounce_events") == [["unmatched", nil]])
        #expect(Self.files("\(maildir.path)/new").isEmpty)
        #expect(maildir.unparsedCount() == 3, "kept in .Unparsed, never deleted")
        #expect(result.stderr.contains("forged_tag") || result.stderr.contains("kept"), "\(result.stderr)")

        // Kept aside means not read again.
        let again = try NotifierProcess.run(["bounces"], environment: env)
        #expect(again.stderr.contains("0 read"), "\(again.stderr)")
    }

    @Test("the daemon reads the mailbox every BOUNCE_POLL_SECONDS on its own thread")
    func daemon() throws {
        let alerted = try Alerted("daemon")
        defer { alerted.remove() }
        let (db, maildir, contact, user, sender) = (alerted.db, alerted.maildir, alerted.contact, alerted.user, alerted.sender)
        var env = alerted.env
        env["BOUNCE_POLL_SECONDS"] = "5"
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        try Self.deliver(try Self.postfixReport(sender: sender, recipient: contact), to: maildir, name: "1.M1P1.relay")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, try db.query("SELECT status FROM notification_logs WHERE user_id = $1", [user]) != [["bounced"]] {
            Thread.sleep(forTimeInterval: 0.2)
        }
        process.terminate()
        let result = NotifierProcess.finish(process, out, err)
        #expect(try db.query("SELECT status FROM notification_logs WHERE user_id = $1", [user]) == [["bounced"]], "\(result.stderr)")
        #expect(try db.query("SELECT status FROM contact_status WHERE user_id = $1", [user]) == [["undeliverable"]])
        #expect(Self.files("\(maildir.path)/new").isEmpty)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("over IMAP (a real Dovecot): the tagged report applied, then expunged; a forged one kept with its keyword; read again, nothing changes")
    func imap() throws {
        try #require(Dovecot.isAvailable, "dovecot-imapd is not installed (scripts/install-deps.sh)")
        let alerted = try Alerted("imap")
        defer { alerted.remove() }
        let dovecot = try Dovecot()
        defer { dovecot.stop() }
        let report = try Self.postfixReport(sender: alerted.sender, recipient: alerted.contact)
        let at = try #require(alerted.sender.firstIndex(of: "@"))
        let last = alerted.sender[alerted.sender.index(before: at)]
        let forged = alerted.sender.replacingOccurrences(of: "\(last)@", with: "\(last == "a" ? "b" : "a")@")
        try dovecot.deliver(report, name: "1.M1P1.relay")
        try dovecot.deliver(try Self.postfixReport(sender: forged, recipient: alerted.contact), name: "2.M1P1.relay")

        let server = BounceSettings.Server(host: "127.0.0.1", port: dovecot.port, user: dovecot.user, tls: .tls, folder: "INBOX")
        var settings = BounceSettings(address: try EmailAddress(validating: BounceStoreIntegrationTests.address),
                                      secret: Secret(BounceStoreIntegrationTests.secret), mailbox: .imap(server), password: Secret(dovecot.password))
        settings.pollSeconds = 5
        let database = try ConfigurationLoader(environment: alerted.env, filePath: nil).load().database
        let mailbox = try IMAPMailbox(server: server, password: Secret(dovecot.password), caFile: dovecot.caFile, timeoutSeconds: 10)
        let reader = BounceReader(settings: settings, database: database, logger: Logger(label: "bounces"), mailbox: mailbox)
        let tally = try reader.poll(stop: StopSignal())
        #expect(BounceReader.summary(tally) == "2 read: 1 bounced, 0 noted, 1 removed, 1 unmatched, 1 kept aside")
        #expect(try alerted.row().first?.first == "bounced")
        #expect(try alerted.db.query("SELECT status FROM contact_status WHERE user_id = $1", [alerted.user]) == [["undeliverable"]])
        #expect(try mailbox.list().isEmpty && mailbox.unparsedCount() == 1)

        // The same report again, in the same session (as the daemon's next poll): `list` must see it.
        try dovecot.deliver(report, name: "3.M1P1.relay")
        let before = try alerted.row()
        let again = BounceReader.summary(try reader.poll(stop: StopSignal()))
        #expect(again == "1 read: 0 bounced, 0 noted, 1 removed, 0 unmatched, 0 kept aside", "\(again)")
        #expect(try alerted.row() == before)
    }
}
