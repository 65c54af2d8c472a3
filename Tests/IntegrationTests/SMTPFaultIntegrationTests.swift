import Foundation
import Testing

/// Issue 6, mail server faults, each against the real test SMTP servers (or a silent port): the
/// alert is never lost — it is delivered, or kept with the reason for a retry — and a mail is
/// sent twice only when its outcome could not be known, then with the same `Message-ID`.
@Suite("Mail server faults", .enabled(if: TestEnvironment.enabled))
struct SMTPFaultIntegrationTests {
    static let date = "2026-01-13"

    /// Runs `--run-now` for `date`, killed (and failed) if it has not stopped by itself in `bound` s.
    static func run(_ env: [String: String], _ arguments: [String] = ["--run-now", "--date", date], bound: TimeInterval = 90) throws -> NotifierProcess.Result {
        let (process, out, err) = try NotifierProcess.start(arguments, environment: env)
        let deadline = Date().addingTimeInterval(bound)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let stopped = !process.isRunning
        if !stopped { kill(process.processIdentifier, SIGKILL) }
        #expect(stopped, "the run stopped by itself within \(Int(bound)) s")
        return NotifierProcess.finish(process, out, err)
    }

    /// A second CA and its self-signed certificate, made with openssl: not the test servers' CA.
    static func otherCA() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("other-ca-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                             "-subj", "/CN=Another CA", "-keyout", "\(folder)/key.pem", "-out", "\(folder)/ca.pem"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("openssl req failed") }
        return "\(folder)/ca.pem"
    }

    /// Each user has one row, sent, and the mailbox one message per user.
    static func expectDeliveredOnce(_ db: TestDatabase, _ mail: Mailbox, _ users: [String]) throws {
        for user in users {
            let rows = try db.logs(user)
            #expect(rows.count == 1 && rows[0].emailSent, "user \(user): \(rows)")
        }
        let deliveries = try mail.deliveries()
        #expect(deliveries.count == users.count && Set(deliveries.map(\.recipient)).count == users.count)
    }

    @Test("TLS handshake failures (a certificate from another CA, implicit TLS against a plain server) send nothing, keep every alert, and the fixed settings deliver each once")
    func tlsHandshake() throws {
        let env = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (1...3).map { try db.addUser(name: "TLS \($0)", email: mail.address("tls\($0)"), checkIns: ["2026-01-10"]) }
        let good = try NotifierProcess.environment(database: db, ["SMTP_RETRY_ATTEMPTS": "2"])
        let wrongCA = try Self.run(good.merging(["SMTP_CA_FILE": try Self.otherCA()]) { $1 })
        #expect(wrongCA.status == 69)
        #expect(wrongCA.stderr.lowercased().contains("certificate"), "\(wrongCA.stderr.suffix(800))")
        // Their retry time is later: `retry` makes them due now.
        let notTLS = try Self.run(good.merging(["SMTP_TLS": "tls", "SMTP_PORT": env.plainPort]) { $1 }, ["retry", "--date", Self.date])
        #expect(notTLS.status == 69)
        #expect(try mail.deliveries().isEmpty, "nothing sent without a verified TLS session")
        for user in users { #expect(try db.logs(user).map(\.status) == ["retry"]) }
        let fixed = try Self.run(good, ["retry", "--date", Self.date])
        #expect(fixed.status == 0)
        try Self.expectDeliveredOnce(db, mail, users)
    }

    @Test("AUTH rejected: nothing sent, the alerts kept, the password never printed; with the right password each is delivered once")
    func authRejected() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (1...3).map { try db.addUser(name: "Auth \($0)", email: mail.address("auth\($0)"), checkIns: ["2026-01-10"]) }
        let good = try NotifierProcess.environment(database: db, ["SMTP_RETRY_ATTEMPTS": "2"])
        let wrong = "wrong-\(UUID().uuidString.prefix(8))"
        let rejected = try Self.run(good.merging(["SMTP_PASSWORD": wrong]) { $1 })
        #expect(rejected.status == 69)
        #expect(rejected.stderr.contains("535") || rejected.stderr.lowercased().contains("login denied"), "\(rejected.stderr.suffix(800))")
        #expect(!rejected.stderr.contains(wrong) && !rejected.stdout.contains(wrong))
        #expect(try mail.deliveries().isEmpty)
        for user in users { #expect(try db.logs(user).map(\.status) == ["retry"]) }
        #expect(try Self.run(good, ["retry", "--date", Self.date]).status == 0)
        try Self.expectDeliveredOnce(db, mail, users)
    }

    @Test("421 (the server closing) and 451 are retried within the run and delivered once; one 550 among many fails alone")
    func transientAndOnePermanent() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let closing = try db.addUser(name: "Closing", email: mail.address("close421once"), checkIns: ["2026-01-10"])
        let busy = try db.addUser(name: "Busy", email: mail.address("temp451once"), checkIns: ["2026-01-10"])
        let rejected = try db.addUser(name: "Gone", email: mail.address("perm550"), checkIns: ["2026-01-10"])
        try db.addUsers(count: 40, domain: mail.domain, lastCheckIn: "2026-01-10")
        let result = try Self.run(try NotifierProcess.environment(database: db, ["SMTP_CONNECTIONS": "3"]))
        #expect(result.status == 75, "some mails failed for good")
        #expect(try mail.events().filter { $0.code == 421 }.count == 1)
        for user in [closing, busy] {
            let row = try #require(try db.logs(user).first)
            #expect(row.emailSent && row.attempts == 2, "retried once, then accepted: \(row)")
        }
        let failed = try #require(try db.logs(rejected).first)
        #expect(failed.status == "failed" && failed.lastError?.hasPrefix("550 5.1.1") == true)
        let deliveries = try mail.deliveries()
        #expect(deliveries.count == 42 && Set(deliveries.map(\.recipient)).count == 42, "everyone else once")
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first?.first == "42")
    }

    @Test("a server that accepts the connection and never answers: timeouts bound the run, every alert is kept")
    func hangingServer() throws {
        let silent = try SilentServer()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (1...4).map { try db.addUser(name: "Hang \($0)", email: mail.address("hang\($0)"), checkIns: ["2026-01-10"]) }
        let env = try NotifierProcess.environment(database: db, [
            "SMTP_PORT": String(silent.port), "SMTP_TIMEOUT_SECONDS": "2", "SMTP_RETRY_ATTEMPTS": "2", "SMTP_CONNECTIONS": "2",
        ])
        let result = try Self.run(env, bound: 60)
        #expect(result.status == 69)
        #expect(result.stderr.lowercased().contains("timeout") || result.stderr.lowercased().contains("timed out"), "\(result.stderr.suffix(800))")
        for user in users { #expect(try db.logs(user).map(\.status) == ["retry"]) }
        withExtendedLifetime(silent) {}
    }

    @Test("the connection dropped after DATA: recorded as unknown, not resent within the run, resent later with the same Message-ID")
    func droppedAfterData() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let dropped = try db.addUser(name: "Dropped", email: mail.address("dropdataonce"), checkIns: ["2026-01-10"])
        let others = try (1...2).map { try db.addUser(name: "Other \($0)", email: mail.address("other\($0)"), checkIns: ["2026-01-10"]) }
        let env = try NotifierProcess.environment(database: db, ["SMTP_CONNECTIONS": "1"])
        let first = try Self.run(env)
        #expect(first.status == 75)
        let row = try #require(try db.logs(dropped).first)
        #expect(row.status == "retry" && !row.emailSent && row.attempts == 1, "not resent within the run: \(row)")
        #expect(row.lastError?.hasPrefix("outcome unknown") == true, "\(row.lastError ?? "")")
        #expect(try mail.deliveries().filter { $0.recipient == mail.address("dropdataonce") }.count == 1, "the server kept it")
        for user in others { #expect(try db.logs(user).first?.emailSent == true) }
        let retried = try Self.run(env, ["retry", "--date", Self.date])
        #expect(retried.status == 0)
        let copies = try mail.deliveries().filter { $0.recipient == mail.address("dropdataonce") }
        #expect(copies.count == 2 && copies[0].messageID != nil && copies[0].messageID == copies[1].messageID,
                "resent once, with the same Message-ID")
        #expect(copies.first?.messageID == row.messageID.map { "<\($0)>" })
        #expect(try db.logs(dropped).first?.emailSent == true)
        #expect(try mail.deliveries().count == 4, "the others were not sent again")
    }
}
