import Bounce
import Foundation
import Store
import Testing
import Values

/// The bounces' first half on the real servers (docs/bounces.md): each mail's `MAIL FROM` is its
/// row's signed tag (the SMTP test server records it), and `BounceStore` applies a report of a
/// dead mailbox once — only to a mail that was sent — however often it is given.
@Suite("Bounces: the tagged sender and the store", .enabled(if: TestEnvironment.enabled))
struct BounceStoreIntegrationTests {
    static let address = "bounces@notify.sileme.test"
    static let secret = "b-0123456789abcdef0123456789abcdef"
    static let tags = BounceTag(address: try! EmailAddress(validating: address), secret: Secret(secret))
    static let date = "2026-01-13"

    /// The settings of a run with `BOUNCE_*` set, reading the Maildir at `path`.
    static func environment(_ db: TestDatabase, maildir path: String) throws -> [String: String] {
        try NotifierProcess.environment(database: db, [
            "BOUNCE_ADDRESS": address, "BOUNCE_SECRET": secret, "BOUNCE_MAILBOX": "maildir:\(path)",
        ])
    }

    @Test("BOUNCE_ADDRESS unset: MAIL FROM is FROM_EMAIL; set: each mail's is its row's tag, and From: is unchanged")
    func envelopeSender() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let plain = try db.addUser(name: "Plain", email: mail.address("plain"), checkIns: ["2026-01-10"])
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.date], environment: NotifierProcess.environment(database: db)).status == 0)
        let tagged = try db.addUser(name: "Tagged", email: mail.address("tagged"), checkIns: ["2026-01-10"])
        let run = try NotifierProcess.run(["--run-now", "--date", Self.date], environment: Self.environment(db, maildir: "/var/tmp/sn-bounces-unused"))
        #expect(run.status == 0, "\(run.stderr)")

        let deliveries = try mail.deliveries()
        try #require(deliveries.count == 2)
        let taggedID = try db.query("SELECT id::text FROM notification_logs WHERE user_id = $1", [tagged]).first?[0] ?? nil
        let taggedRow = try #require(taggedID.flatMap { Int64($0) })
        #expect(deliveries[0].recipient == mail.address("plain") && deliveries[0].mailFrom == "noreply@sileme.app")
        #expect(deliveries[1].recipient == mail.address("tagged") && deliveries[1].mailFrom == Self.tags.envelopeSender(row: taggedRow))
        #expect(Self.tags.row(in: try #require(deliveries[1].mailFrom)) == taggedRow)
        for delivery in deliveries {
            let headers = String(decoding: delivery.raw, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
            #expect(headers.contains("<noreply@sileme.app>"), "From: stays FROM_EMAIL")
            #expect(!headers.contains("bounces+"))
        }
        #expect(try db.logs(plain).first?.status == "sent")
    }

    @Test("a permanent bounce is applied once: the row bounced, the contact undeliverable, a notice waiting for its retry skipped; again, or a second report, or a row not sent: nothing more")
    func appliedOnce() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let gone = try db.addUser(name: "Gone", email: mail.address("gone"), checkIns: ["2026-01-10"])
        let refused = try db.addUser(name: "Refused", email: mail.address("perm550"), checkIns: ["2026-01-10"])
        _ = try NotifierProcess.run(["--run-now", "--date", Self.date], environment: NotifierProcess.environment(database: db))
        func row(_ user: String) throws -> (id: Int64, messageID: String) {
            let row = try db.query("SELECT id::text, message_id FROM notification_logs WHERE user_id = $1", [user]).first
            let id = row?[0].flatMap { Int64($0) }, messageID = row?[1] ?? nil
            return (try #require(id), try #require(messageID))
        }
        let sent = try row(gone), failed = try row(refused)
        let connection = db.connection
        let delivery = try #require(try BounceStore.delivery(connection, id: sent.id))
        #expect(delivery.userID == gone && delivery.contact == mail.address("gone") && delivery.status == "sent")
        #expect(try BounceStore.delivery(connection, messageID: sent.messageID) == delivery)
        #expect(try BounceStore.delivery(connection, messageID: "7k3mq2xw9d8f1a.alert@notify.sileme.test") == nil)
        #expect(try BounceStore.delivery(connection, id: 999_999) == nil)

        // The streak's follow-up to the contact, waiting for its retry on e-mail and on the webhook.
        for channel in ["email", "webhook"] {
            try db.query("""
                INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, consecutive_miss_days,
                                               status, attempts, message_id, last_check_in_date, last_error)
                SELECT user_id, notification_date, 'follow_up', $2, contact, false, consecutive_miss_days, 'retry', 1,
                       message_id || '.' || $2, last_check_in_date, '451 4.3.0 try again'
                FROM notification_logs WHERE id = $1
                """, [String(sent.id), channel])
        }

        let event = BounceStore.Event(report: "report-1", kind: .permanent, domain: mail.domain, logID: sent.id, status: "5.1.1",
                                      diagnostic: "smtp; 550 5.1.1 mailbox unavailable")
        let first = try BounceStore.applyPermanent(connection, event)
        #expect(first.recorded && first.bounced && first.noticesSkipped == 1)
        #expect(try db.query("SELECT channel, status, last_error FROM notification_logs WHERE user_id = $1 AND kind = 'follow_up' ORDER BY channel",
                             [gone]) == [["email", "skipped", "contact_bounced"], ["webhook", "retry", "451 4.3.0 try again"]],
                "the mail waiting for its retry is no longer owed; the webhook event about the user still is")
        let after = try db.query("""
            SELECT n.status, n.email_sent::text, n.bounce_status, n.bounce_diagnostic, n.bounced_at::text, s.status, s.last_reply
            FROM notification_logs n JOIN contact_status s ON s.user_id = n.user_id AND s.email = n.contact WHERE n.id = $1
            """, [String(sent.id)])
        #expect(after.map { [$0[0], $0[1], $0[2], $0[3], $0[5], $0[6]] }
                == [["bounced", "true", "5.1.1", "smtp; 550 5.1.1 mailbox unavailable", "undeliverable", "smtp; 550 5.1.1 mailbox unavailable"]])
        let again = try BounceStore.applyPermanent(connection, event)
        #expect(!again.recorded && !again.bounced)
        var second = event
        second.report = "report-2"
        let other = try BounceStore.applyPermanent(connection, second)
        #expect(other.recorded && !other.bounced, "a second report of the same row is counted, and bounces nothing again")
        #expect(try db.query("SELECT bounced_at::text FROM notification_logs WHERE id = $1", [String(sent.id)]) == [[after[0][4]]])

        var notSent = event
        notSent.report = "report-3"
        notSent.logID = failed.id
        let refusedBefore = try db.query("SELECT status, updated_at::text FROM notification_logs WHERE id = $1", [String(failed.id)])
        #expect(!(try BounceStore.applyPermanent(connection, notSent)).bounced)
        #expect(try db.query("SELECT status, updated_at::text FROM notification_logs WHERE id = $1", [String(failed.id)]) == refusedBefore)

        #expect(try BounceStore.record(connection, BounceStore.Event(report: "report-4", kind: .transient, domain: mail.domain, logID: sent.id)))
        #expect(!(try BounceStore.record(connection, BounceStore.Event(report: "report-4", kind: .transient, domain: mail.domain, logID: sent.id))))
        #expect(try BounceStore.record(connection, BounceStore.Event(report: "report-5", kind: .unmatched, domain: "")))
        #expect(try db.query("SELECT kind, count(*)::text FROM sileme.bounce_events GROUP BY kind ORDER BY kind")
                == [["permanent", "3"], ["transient", "1"], ["unmatched", "1"]])
    }
}
