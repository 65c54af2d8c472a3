import Bounce
import Config
import Delivery
@testable import Admin
import Foundation
import Rule
import Store
import TestSupport
import Testing
import Values

/// A bounce's effects and its reporting on the real servers (docs/bounces.md): the real Postfix
/// report of a dead mailbox, in the Maildir as the MTA delivers it, read by the notifier — the app
/// hears `contact.undeliverable` once, signed (the webhook receiver checks the HMAC); the streak's
/// later notices skip the dead contact and still reach the others; the history report, `check`
/// and the metrics file say what the reader did.
@Suite("Bounces: effects and reporting", .enabled(if: TestEnvironment.enabled), .serialized)
struct BounceEffectsIntegrationTests {
    typealias Wire = BounceWireIntegrationTests

    /// One user with contacts `gone` and `alive`, alerted on 2026-01-13 with the webhook and
    /// `BOUNCE_*` on; the report of `gone`'s alert delivered into the Maildir.
    struct Bounced {
        let db: TestDatabase
        let mail: Mailbox
        let maildir: Maildir
        let receiver: WebhookReceiver
        var env: [String: String]
        let user: String

        init(_ overrides: [String: String?] = [:]) throws {
            db = try TestDatabase()
            mail = try Mailbox()
            maildir = try Wire.maildir()
            let secret = WebhookTransportIntegrationTests.secret()
            receiver = try WebhookReceiver(secret: secret)
            user = try db.addUser(name: "张三", email: mail.address("fallback"), checkIns: ["2026-01-10"])
            try LifecycleIntegrationTests.addContacts(db, user, [mail.address("gone"), mail.address("alive")])
            var values: [String: String?] = [
                "BOUNCE_ADDRESS": BounceStoreIntegrationTests.address, "BOUNCE_SECRET": BounceStoreIntegrationTests.secret,
                "BOUNCE_MAILBOX": "maildir:\(maildir.path)",
            ]
            values.merge(overrides) { $1 }
            env = try WebhookDeliveryIntegrationTests.environment(db, receiver, secret: secret, values)
            let run = try NotifierProcess.run(["--run-now", "--date", Wire.date], environment: env)
            guard run.status == 0, let sender = try mail.deliveries().first(where: { $0.recipient == mail.address("gone") })?.mailFrom else {
                throw TestFailure("the alerts were not sent: \(run.stderr)")
            }
            try Wire.deliver(try Wire.postfixReport(sender: sender, recipient: mail.address("gone")), to: maildir, name: "1.M1P1.relay")
        }

        func remove() { try? FileManager.default.removeItem(atPath: maildir.path) }

        /// (kind, channel, contact, status) of the user's rows.
        func rows() throws -> [[String?]] {
            try db.query("""
                SELECT kind, channel, contact, status FROM notification_logs WHERE user_id = $1 ORDER BY channel, kind, contact
                """, [user])
        }

        /// The delivered events of `type`.
        func events(_ type: String) throws -> [(type: String, data: [String: Any], id: String)] {
            try WebhookDeliveryIntegrationTests.delivered(receiver).filter { $0.type == type }
        }
    }

    @Test("the signed contact.undeliverable event once; the follow-up and all-clear reach the other contact only; nothing resent")
    func eventAndNotices() throws {
        let bounced = try Bounced(["FOLLOW_UP_DAYS": "1"])
        defer { bounced.remove() }
        let (db, mail, env, user) = (bounced.db, bounced.mail, bounced.env, bounced.user)
        let read = try NotifierProcess.run(["bounces"], environment: env)
        #expect(read.stderr.contains("1 read: 1 bounced"), "\(read.stderr)")

        // A follow-up to that contact that was waiting for its retry when the report came (made here
        // from the alert's row): `retry` says why it is not sent again, and does not send it.
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, consecutive_miss_days,
                                           status, attempts, message_id, last_check_in_date, recipient_masked, last_error)
            SELECT user_id, notification_date, 'follow_up', channel, contact, false, consecutive_miss_days, 'retry', 1,
                   message_id || '.f', last_check_in_date, recipient_masked, '451 4.3.0 Temporary failure, try again'
            FROM notification_logs WHERE user_id = $1 AND kind = 'alert' AND status = 'bounced'
            """, [user])
        // It wakes no daemon for a retry pass (none would send it: woken for it, a daemon would run pass after pass).
        let state = try DaemonState.read(db.connection, dates: [try #require(CalendarDate(parsing: Wire.date))], claims: ClaimSQL(leaseSeconds: 300))
        #expect(state.nextRetry == nil)
        let plan = try NotifierProcess.run(["retry", "--date", Wire.date, "--dry-run", "--json"], environment: env)
        #expect(plan.status == 0 && plan.stdout.contains(#""kind":"follow_up""#) && plan.stdout.contains(#""decision":"contact_bounced""#),
                "\(plan.stdout)\(plan.stderr)")
        let sentBefore = try mail.deliveries().count
        #expect(try NotifierProcess.run(["retry", "--date", Wire.date, "--kind", "follow_up"], environment: env).status == 0)
        #expect(try mail.deliveries().count == sentBefore)
        try db.query("DELETE FROM notification_logs WHERE user_id = $1 AND kind = 'follow_up'", [user])

        // The next pass of the day sends what the bounced row owes: the event, once.
        #expect(try NotifierProcess.run(["--run-now", "--date", Wire.date], environment: env).status == 0)
        #expect(try NotifierProcess.run(["--run-now", "--date", Wire.date], environment: env).status == 0)
        let events = try bounced.events("contact.undeliverable")
        let bodies = try bounced.receiver.received().map(\.body)
        try #require(events.count == 1, "\(bodies)")
        let data = events[0].data
        #expect(data["user_id"] as? String == user && data["user_name"] as? String == "张三")
        #expect((data["contact"] as? [String: Any])?["email"] as? String == mail.address("gone"))
        #expect((data["contact"] as? [String: Any])?["position"] as? Int == 1)
        let bounce = try #require(data["bounce"] as? [String: Any])
        let alertID = try db.query("SELECT message_id FROM notification_logs WHERE user_id = $1 AND contact = $2 AND kind = 'alert'",
                                   [user, mail.address("gone")]).first?.first ?? nil
        #expect(bounce["notification_kind"] as? String == "alert" && bounce["notification_date"] as? String == Wire.date)
        #expect(bounce["status"] as? String == "5.1.1" && bounce["message_id"] as? String == alertID)
        #expect((bounce["diagnostic"] as? String)?.contains("550 5.1.1") == true)
        #expect(bounce["bounced_at"] is String)
        #expect(try bounced.receiver.received().allSatisfy { $0.verified }, "every request signed")
        #expect(events[0].id.hasPrefix("msg_20260113_undeliverable_"))

        // The streak goes on: the follow-up (a day later) and the all-clear reach `alive` only.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: env).status == 0)
        try db.checkIn(user, "2026-01-15")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-15"], environment: env).status == 0)
        let gone = mail.address("gone"), alive = mail.address("alive")
        #expect(try bounced.rows() == [
            ["alert", "email", alive, "sent"], ["alert", "email", gone, "bounced"],
            ["all_clear", "email", alive, "sent"], ["follow_up", "email", alive, "sent"],
            ["alert", "webhook", "", "sent"], ["all_clear", "webhook", "", "sent"], ["follow_up", "webhook", "", "sent"],
            ["undeliverable", "webhook", gone, "sent"],
        ])
        #expect(try mail.deliveries().filter { $0.recipient == gone }.count == 1, "only the alert that bounced")
        #expect(try bounced.events("contact.undeliverable").count == 1)
    }

    @Test("a notice planned before the report and claimed after it is cancelled: contact_bounced (a follow-up, an escalation)")
    func claimedAfterTheBounce() throws {
        let bounced = try Bounced()
        defer { bounced.remove() }
        #expect(try NotifierProcess.run(["bounces"], environment: bounced.env).stderr.contains("1 bounced"))
        let alertDate = try #require(CalendarDate(parsing: Wire.date))
        func job(_ local: String, _ kind: DeliveryJob.Kind) throws -> DeliveryJob {
            DeliveryJob(kind: kind, channel: .email, userID: bounced.user, name: try DisplayName(cleaning: "张三"),
                        email: try EmailAddress(validating: bounced.mail.address(local)), notificationDate: alertDate, missedDays: 3,
                        lastCheckIn: alertDate.adding(days: -3))
        }
        let jobs = [try job("gone", .followUp), try job("alive", .followUp), try job("gone", .escalation), try job("alive", .escalation)]
        let batch = try NotificationStore(owner: "test", claimLeaseSeconds: 300)
            .claim(bounced.db.connection, jobs: jobs, runDate: alertDate.adding(days: 1), runID: nil,
                   newMessageIDs: (1...4).map { "sileme.t.\($0)@sileme.app" }, supersede: true)
        #expect(batch.cancelled[0] == "contact_bounced" && batch.claims[0] == nil)
        #expect(batch.cancelled[1] == nil && batch.claims[1] != nil, "the other contact's follow-up is claimed")
        #expect(batch.cancelled[2] == "contact_bounced" && batch.claims[2] == nil, "nor is the dead contact told of the escalation")
        #expect(batch.cancelled[3] == nil && batch.claims[3] != nil)
    }

    @Test("the daemon: the report read, the event delivered within the poll")
    func daemon() throws {
        var bounced = try Bounced()
        defer { bounced.remove() }
        bounced.env["BOUNCE_POLL_SECONDS"] = "5"
        let (process, out, err) = try NotifierProcess.start([], environment: bounced.env)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try bounced.events("contact.undeliverable").isEmpty { Thread.sleep(forTimeInterval: 0.2) }
        process.terminate()
        let result = NotifierProcess.finish(process, out, err)
        #expect(try bounced.events("contact.undeliverable").count == 1, "\(result.stderr.suffix(2000))")
        #expect(result.status == 0)
    }

    @Test("the history report counts the bounced row and the report per day and per domain; the metrics file and check say what the reader did")
    func reporting() throws {
        let bounced = try Bounced()
        defer { bounced.remove() }
        let (db, mail) = (bounced.db, bounced.mail)
        var env = bounced.env
        let metrics = "/var/tmp/sn-metrics-\(UUID().uuidString.prefix(8)).prom"
        defer { try? FileManager.default.removeItem(atPath: metrics) }
        env["METRICS_FILE"] = metrics
        // An out-of-office reply beside it: kept aside.
        try Wire.deliver(try BounceMailboxIntegrationTests.corpus("sisimai-rfc3834-01.eml"), to: bounced.maildir, name: "2.M1P1.relay")
        #expect(try NotifierProcess.run(["bounces"], environment: env).status == 0)
        // The report read at 10:00 in the service zone on the alert's day.
        try db.query("UPDATE sileme.bounce_events SET received_at = '2026-01-13 10:00:00+08'")

        let report = try NotifierProcess.run(["report", "--from", "2026-01-12", "--to", Wire.date, "--format", "json"], environment: env)
        #expect(report.status == 0, "\(report.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let days = try #require(json["days"] as? [[String: Any]])
        #expect(days.map { $0["bounced"] as? Int } == [0, 1])
        #expect(days.last?["sent"] as? Int == 2, "the other contact's alert and the webhook's; the bounced one is not counted as sent")
        let bounces = try #require(json["bounces"] as? [String: Any])
        #expect((bounces["by_day"] as? [[String: Any]])?.map { [$0["date"] as? String, ($0["permanent"] as? Int).map(String.init)] }
                == [[Wire.date, "1"]])
        #expect((bounces["by_domain"] as? [[String: Any]])?.map { [$0["domain"] as? String, ($0["permanent"] as? Int).map(String.init)] }
                == [[mail.domain, "1"]])
        let table = try NotifierProcess.run(["report", "--from", "2026-01-12", "--to", Wire.date], environment: env)
        #expect(table.stdout.contains("\(mail.domain): 1 permanent"), "\(table.stdout)")
        #expect(!table.stdout.contains(mail.address("gone")), "addresses masked")

        // The metrics file after a run.
        #expect(try NotifierProcess.run(["--run-now", "--date", Wire.date], environment: env).status == 0)
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(text.contains("sileme_notifier_bounce_reports_total 2\n") && text.contains("sileme_notifier_bounces_applied_total 1\n"), "\(text)")
        #expect(text.contains("sileme_notifier_bounce_reports_kept_aside_total 1\n") && text.contains("sileme_notifier_bounce_mailbox_failures_total 0\n"))
        #expect(text.contains("sileme_notifier_bounce_mailbox_read_timestamp_seconds "))

        // check: the mailbox listed for real, its kept-aside message, and when it was read.
        let check = try NotifierProcess.run(["check"], environment: env)
        let line = try #require(check.stderr.split(separator: "\n").first { $0.contains("bounce mailbox") }, "\(check.stderr)")
        #expect(line.contains("ok   bounce mailbox") && line.contains("reachable, 0 waiting, 1 kept aside unparsed") && line.contains("last read"), "\(line)")
        #expect(!line.contains("daemon running"), "read moments ago")
    }

    @Test("check's listing over IMAP (a real Dovecot): the messages waiting, the one kept aside with its keyword; a refused password fails, unquoted")
    func probeOverIMAP() throws {
        try #require(Dovecot.isAvailable, "dovecot-imapd is not installed (scripts/install-deps.sh)")
        let dovecot = try Dovecot()
        defer { dovecot.stop() }
        try dovecot.deliver(try BounceMailboxIntegrationTests.corpus("sisimai-rfc3834-01.eml"), name: "1.M1P1.relay")
        try dovecot.deliver(try BounceMailboxIntegrationTests.corpus("sisimai-is-not-bounce-01.eml"), name: "2.M1P1.relay")
        let server = BounceSettings.Server(host: "127.0.0.1", port: dovecot.port, user: dovecot.user, tls: .tls, folder: "INBOX")
        let settings = BounceSettings(address: try EmailAddress(validating: BounceStoreIntegrationTests.address),
                                      secret: Secret(BounceStoreIntegrationTests.secret), mailbox: .imap(server), password: Secret(dovecot.password))
        let mailbox = try IMAPMailbox(server: server, password: Secret(dovecot.password), caFile: dovecot.caFile, timeoutSeconds: 10)
        let before = try BounceReader.probe(settings, mailbox: mailbox)
        #expect(before.waiting == 2 && before.keptAside == 0)
        try mailbox.setAside(try #require(try mailbox.list().first))
        let after = try BounceReader.probe(settings, mailbox: mailbox)
        #expect(after.waiting == 1 && after.keptAside == 1)

        let refused = try IMAPMailbox(server: server, password: Secret("not-\(dovecot.password)"), caFile: dovecot.caFile, timeoutSeconds: 10)
        let listing = Result { try BounceReader.probe(settings, mailbox: refused) }
        let line = HealthCheck.bounceMailbox(settings, listing: listing, record: .success(nil), now: Date())
        #expect(!line.ok && line.detail.contains("cannot be read"), "\(line.detail)")
        #expect(!line.detail.contains(dovecot.password), "\(line.detail)")
    }

    @Test("check: a mailbox that cannot be reached is a failed line, with no password in it")
    func unreachable() throws {
        let db = try TestDatabase()
        let password = "pw-\(UUID().uuidString)"
        let file = "/var/tmp/sn-bounce-password-\(UUID().uuidString.prefix(8))"
        try Data(password.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let env = try NotifierProcess.environment(database: db, [
            "BOUNCE_ADDRESS": BounceStoreIntegrationTests.address, "BOUNCE_SECRET": BounceStoreIntegrationTests.secret,
            "BOUNCE_MAILBOX": "imaps://bounces@127.0.0.1:1/INBOX", "BOUNCE_PASSWORD_FILE": file,
        ])
        let check = try NotifierProcess.run(["check"], environment: env)
        let line = try #require(check.stderr.split(separator: "\n").first { $0.contains("bounce mailbox") }, "\(check.stderr)")
        #expect(line.contains("FAIL bounce mailbox") && line.contains("cannot be read"), "\(line)")
        #expect(check.status != 0)
        #expect(!check.stdout.contains(password) && !check.stderr.contains(password))

        var missing = env
        missing["BOUNCE_MAILBOX"] = "maildir:/var/tmp/sn-no-such-maildir-\(UUID().uuidString.prefix(8))"
        missing["BOUNCE_PASSWORD_FILE"] = nil
        let maildir = try NotifierProcess.run(["check"], environment: missing)
        #expect(maildir.stderr.split(separator: "\n").contains { $0.contains("FAIL bounce mailbox") && $0.contains("cannot be read") }, "\(maildir.stderr)")
    }
}
