import Bounce
import Config
import Delivery
import Foundation
import Logging
import Testing
import Values

/// The mail server dies while the reader works through many reports: Dovecot SIGKILLed (master
/// and sessions) in the middle of a poll over IMAP, and over POP3. With Dovecot started again on
/// the same Maildir, the next poll reads what was not removed — among it a report whose effect was
/// committed just before the kill — and every report has had its effect exactly once: each row
/// bounced once, one event per report, the mailbox empty at the end.
@Suite("Bounces: the mail server killed mid-read", .enabled(if: TestEnvironment.enabled), .serialized)
struct BounceCrashIntegrationTests {
    /// How many alerted users, each with a dead mailbox and a report waiting.
    static let reports = 40

    @Test("Dovecot SIGKILLed mid-poll, then restarted: every report applied exactly once, none lost", arguments: ["imap", "pop3"])
    func killedMidRead(protocolName: String) throws {
        try #require(Dovecot.isAvailable, "dovecot-imapd and dovecot-pop3d are not installed (scripts/install-deps.sh)")
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (1...Self.reports).map { try db.addUser(name: "用户\($0)", email: mail.address("dead\($0)"), checkIns: ["2026-01-10"]) }
        let env = try BounceStoreIntegrationTests.environment(db, maildir: "/var/tmp/sn-bounces-unused")
        let run = try NotifierProcess.run(["--run-now", "--date", BounceStoreIntegrationTests.date], environment: env)
        try #require(run.status == 0, "\(run.stderr)")
        let deliveries = try mail.deliveries()
        try #require(deliveries.count == Self.reports)

        let dovecot = try Dovecot()
        defer { dovecot.stop() }
        for (index, delivery) in deliveries.enumerated() {
            let sender = try #require(delivery.mailFrom)
            try dovecot.deliver(try BounceWireIntegrationTests.postfixReport(sender: sender, recipient: delivery.recipient),
                                name: "\(index + 1).M1P1.relay")
        }

        // The daemon's reader, opening the mailbox from its settings (the certificate from BOUNCE_CA_FILE).
        let isIMAP = protocolName == "imap"
        let server = BounceSettings.Server(host: "127.0.0.1", port: isIMAP ? dovecot.port : dovecot.pop3Port, user: dovecot.user,
                                           tls: .tls, folder: isIMAP ? "INBOX" : "")
        var settings = BounceSettings(address: try EmailAddress(validating: BounceStoreIntegrationTests.address),
                                      secret: Secret(BounceStoreIntegrationTests.secret),
                                      mailbox: isIMAP ? .imap(server) : .pop3(server), password: Secret(dovecot.password))
        settings.caFile = dovecot.caFile
        let database = try ConfigurationLoader(environment: env, filePath: nil).load().database
        func bounced() throws -> Int {
            Int(try db.query("SELECT count(*)::text FROM notification_logs WHERE status = 'bounced'").first?.first??.description ?? "0") ?? 0
        }

        // The first poll on a thread of its own; Dovecot is killed once a few reports are applied.
        let first = BounceReader(settings: settings, database: database, logger: Logger(label: "bounces"))
        nonisolated(unsafe) var outcome: Result<BounceReader.Tally, any Error>?
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            outcome = Result { try first.poll(stop: StopSignal()) }
            done.signal()
        }
        let midway = try DaemonIntegrationTests.eventually(60) { try bounced() >= 5 }
        dovecot.crash()
        let appliedBeforeKill = try bounced()
        #expect(done.wait(timeout: .now() + 60) == .success, "the poll ends when its server dies")
        try #require(midway, "the reader did not get going")
        if case .success(let tally) = outcome {
            Issue.record("the poll finished all \(tally.read) reports before the kill: nothing was cut (\(BounceReader.summary(tally)))")
        }
        #expect(appliedBeforeKill < Self.reports, "the kill came mid-read")

        // Restarted: a new reader (as the daemon opens a new session after a failed poll).
        try dovecot.start()
        let second = BounceReader(settings: settings, database: database, logger: Logger(label: "bounces"))
        let beforeSecond = try bounced()
        #expect(beforeSecond >= appliedBeforeKill)
        let tally = try second.poll(stop: StopSignal())
        #expect(try bounced() == Self.reports, "every row bounced: \(BounceReader.summary(tally))")
        #expect(tally.bounced == Self.reports - beforeSecond, "only what was not applied is applied: \(BounceReader.summary(tally))")
        // Read again are the reports not yet removed: those not applied, and any applied but not
        // yet removed at the kill (recognised by its event, removed, nothing applied twice).
        #expect(tally.read == tally.removed && tally.read >= tally.bounced, "\(BounceReader.summary(tally))")
        #expect(tally.unmatched == 0 && tally.setAside == 0)
        #expect(try db.query("SELECT count(*)::text, count(DISTINCT log_id)::text FROM sileme.bounce_events WHERE kind = 'permanent'")
                == [["\(Self.reports)", "\(Self.reports)"]], "one event per report")
        for user in users {
            #expect(try db.query("SELECT status FROM contact_status WHERE user_id = $1", [user]) == [["undeliverable"]])
        }
        #expect(try second.poll(stop: StopSignal()).read == 0, "the mailbox is empty")
        print("\(protocolName): \(appliedBeforeKill) applied before the kill, then \(BounceReader.summary(tally))")
    }
}
