import Foundation
import Testing

/// Fallback relays (docs/delivery.md, "Fallback relays"), the notifier a real process and every
/// relay a real server: the primary stopped (nothing listens on its port), a real Postfix that
/// refuses the session, and the test environment's STARTTLS sink with AUTH — the alerts go out
/// through the third, a dead recipient's `550` is not carried to another relay, each sent row
/// names its relay, and the primary is used first again once it is back and its rest is over.
@Suite("Fallback relays, on real servers", .enabled(if: TestEnvironment.enabled))
struct RelayFailoverIntegrationTests {
    @Test("primary down, second relay refusing the session: the alerts go out through the third, the dead address is refused once and not tried elsewhere; each row names its relay, the journal says relay_failover; the primary back, it carries the next alert")
    func failover() throws {
        try #require(Postfix.isAvailable, "postfix is not installed (scripts/install-deps.sh)")
        let env = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let primaryPort = try PostgresCluster.freePort()
        // A relay whose every session is refused: Postfix's client restriction, judged at once.
        let refusing = try Postfix(relaying: [mail.domain], to: env.plainPort,
                                   extra: ["smtpd_delay_reject = no", "smtpd_client_restrictions = reject"])
        defer { refusing.stop() }
        for name in ["alice", "bob", "perm550-dead"] {
            try db.addUser(name: name, email: mail.address(name), checkIns: ["2026-01-10"])
        }
        let third = "smtp://sileme@localhost:\(env.starttlsPort)"
        let settings = try NotifierProcess.environment(database: db, [
            "SMTP_HOST": "127.0.0.1", "SMTP_PORT": "\(primaryPort)", "SMTP_TLS": "none",
            "SMTP_USER": nil, "SMTP_PASSWORD": nil, "SMTP_CA_FILE": nil,
            "SMTP_FALLBACK": "smtp://127.0.0.1:\(refusing.port)?tls=none, \(third)?ca_file=\(env.caFile)",
            "SMTP_FALLBACK_PASSWORD_2": env.smtpPassword, "SMTP_FALLBACK_RETRY": "2s", "SMTP_CONNECTIONS": "1",
        ])
        let check = try NotifierProcess.run(["check"], environment: settings)
        #expect(check.status == 69, "check fails while a relay is unreachable: \(check.stdout)\(check.stderr)")
        let said = check.stdout + check.stderr
        #expect(said.contains("fallback relay 2") && said.contains("TLS verified, authenticated"), "\(said)")

        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: settings)
        #expect(try mail.deliveries().map(\.recipient).sorted() == [mail.address("alice"), mail.address("bob")], "\(run.stderr)")
        #expect(try mail.events().filter { $0.address.hasPrefix("perm550-dead") }.map(\.code) == [550],
                "the dead address is refused by the relay that took the session, once, and not carried to another")
        #expect(try db.query("""
            SELECT u.name, n.status, coalesce(n.relay, '') FROM notification_logs n JOIN users u ON u.id = n.user_id
            WHERE n.kind = 'alert' ORDER BY u.name
            """) == [["alice", "sent", "smtp://localhost:\(env.starttlsPort)"], ["bob", "sent", "smtp://localhost:\(env.starttlsPort)"],
                     ["perm550-dead", "failed", ""]])
        #expect(run.stderr.contains("relay smtp://127.0.0.1:\(primaryPort) could not take a message"), "\(run.stderr)")
        #expect(run.stderr.contains("relay smtp://127.0.0.1:\(refusing.port) could not take a message"), "\(run.stderr)")
        // Once the primary and the refusing relay failed, they rest: the next messages start at
        // the third (with one connection, each relay is passed over once in the run).
        let counts = Dictionary(try db.query("SELECT relay, accepted::text || '/' || passed_over::text FROM sileme.relay_counts")
            .map { ($0[0] ?? "", $0[1] ?? "") }) { a, _ in a }
        #expect(counts == ["smtp://127.0.0.1:\(primaryPort)": "0/1", "smtp://127.0.0.1:\(refusing.port)": "0/1",
                           "smtp://localhost:\(env.starttlsPort)": "2/0"], "accepted/passed over: \(counts)")

        // The primary comes back; a new run (a new process, no rest remembered) uses it first.
        let primary = try PlainSink(port: primaryPort)
        defer { primary.stop() }
        try db.addUser(name: "carol", email: mail.address("carol"), checkIns: ["2026-01-10"])
        let again = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: settings)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(primary.recipients == [mail.address("carol").lowercased()], "\(again.stderr)")
        #expect(try db.query("SELECT coalesce(n.relay, '') FROM notification_logs n JOIN users u ON u.id = n.user_id WHERE u.name = 'carol'")
                == [["smtp://127.0.0.1:\(primaryPort)"]])
        #expect(!again.stderr.contains("could not take a message"), "\(again.stderr)")
    }
}
