import Foundation
import Testing

/// `MAIL_TRANSPORT=outbox` end to end: files instead of SMTP, and the file system faults of issue 6
/// (disk full, read-only) on a real `tmpfs` — alerts are kept for a retry, never lost, never doubled.
@Suite("Outbox transport on real servers", .enabled(if: TestEnvironment.enabled))
struct OutboxIntegrationTests {
    /// The run's settings with the outbox instead of SMTP (no SMTP setting at all).
    func environment(_ db: TestDatabase, outbox: String, _ overrides: [String: String?] = [:]) throws -> [String: String] {
        var values: [String: String?] = [
            "MAIL_TRANSPORT": "outbox", "OUTBOX_DIR": outbox,
            "SMTP_HOST": nil, "SMTP_PORT": nil, "SMTP_TLS": nil, "SMTP_USER": nil, "SMTP_PASSWORD": nil, "SMTP_CA_FILE": nil,
        ]
        for (key, value) in overrides { values[key] = value }
        return try NotifierProcess.environment(database: db, values)
    }

    /// A fresh (not mounted) folder, removed afterwards by the caller's `defer`.
    func freshFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sn-outbox-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    /// Each user's single mail: exactly one file addressed to them, its Message-ID the one recorded as sent.
    func expectOneMailEach(_ users: [String: String], in outbox: OutboxFolder, db: TestDatabase) throws {
        let messages = try outbox.messages()
        #expect(messages.count == users.count, "one file per due user")
        for (user, email) in users {
            let rows = try db.logs(user)
            #expect(rows.count == 1 && rows[0].status == "sent" && rows[0].emailSent, "user \(user) recorded sent once")
            let files = messages.filter { $0.to == email.lowercased() }
            #expect(files.count == 1, "exactly one file for \(email)")
            #expect(files.first?.messageID == rows.first?.messageID, "the file is the message recorded for \(email)")
        }
        #expect(Set(messages.compactMap(\.messageID)).count == messages.count, "no Message-ID twice")
        #expect(outbox.names("tmp").isEmpty, "nothing left in tmp/")
    }

    @Test("--run-now with MAIL_TRANSPORT=outbox writes one parseable file per due user and records them sent")
    func runNow() throws {
        let db = try TestDatabase()
        let dir = try freshFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var due: [String: String] = [:]
        for i in 1...5 {
            let email = "contact\(i)@outbox.example.com"
            due[try db.addUser(name: "用户 \(i)", email: email, checkIns: ["2026-01-10"])] = email
        }
        try db.addUser(name: "Fine", email: "fine@outbox.example.com", checkIns: ["2026-01-10", "2026-01-13"])
        let bad = try db.addUser(name: "Bad", email: "no-at-sign", checkIns: ["2026-01-10"])
        let env = try environment(db, outbox: dir)

        let check = try NotifierProcess.run(["check"], environment: env)
        #expect(check.status == 0, "check: \(check.stderr)")
        #expect(check.stderr.contains("ok   outbox: \(dir) is writable"))

        let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(result.status == 0, "run: \(result.stderr)")
        let outbox = OutboxFolder(path: dir)
        #expect(outbox.names("").contains("cur"), "tmp/, new/ and cur/ created")
        try expectOneMailEach(due, in: outbox, db: db)
        for message in try outbox.messages() {
            #expect(message.name.hasSuffix(".eml"))
            #expect(message.parsed.defects.isEmpty)
            #expect(message.parsed.fromAddress == "noreply@sileme.app")
            #expect(message.parsed.headers["Subject"]?.first?.contains("的签到提醒") == true)
            #expect(message.parsed.text?.contains("已连续 2 天未") == true)
            #expect(message.raw.suffix(2) == Data("\r\n".utf8), "the file is the whole message, CRLF line ends")
        }
        #expect(try db.logs(bad).first?.status == "skipped")
        // A second run sends nothing more: the streaks are notified.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try outbox.messages().count == 5)
    }

    @Test("configuration: outbox without OUTBOX_DIR, or a missing one, exits 78 naming OUTBOX_DIR")
    func configuration() throws {
        let db = try TestDatabase()
        for dir: String? in [nil, "/nonexistent/outbox"] {
            let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"],
                                                 environment: try environment(db, outbox: "", ["OUTBOX_DIR": dir]))
            #expect(result.status == 78)
            #expect(result.stderr.contains("OUTBOX_DIR"))
        }
        #expect(try db.query("SELECT count(*) FROM sileme.notifier_runs").first?.first == "0", "refused before touching anything")
    }

    @Test("disk full: the messages that fit are sent, the rest kept as retry (exit 75, no partial file); after freeing space, retry delivers exactly the rest")
    func diskFull() throws {
        let mount = try TmpfsMount(size: "64k")
        defer { mount.unmount() }
        for sub in ["tmp", "new", "cur"] { try FileManager.default.createDirectory(atPath: "\(mount.path)/\(sub)", withIntermediateDirectories: false) }
        let fits = 3
        // Every message is under one 4 KiB page (checked below), so `fits` free pages hold `fits` messages.
        try mount.fill(leaving: fits)
        #expect(try mount.free().blocks == fits)

        let db = try TestDatabase()
        var due: [String: String] = [:]
        for i in 1...10 {
            let email = "full\(i)@outbox.example.com"
            due[try db.addUser(name: "Full \(i)", email: email, checkIns: ["2026-01-10"])] = email
        }
        let env = try environment(db, outbox: mount.path)
        let outbox = OutboxFolder(path: mount.path)

        let first = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(first.status == 75, "some mails failed and will be retried: \(first.stderr)")
        let written = try outbox.messages()
        #expect(written.count == fits, "exactly the messages that fit")
        #expect(written.allSatisfy { $0.raw.count < 4096 && $0.parsed.defects.isEmpty && $0.parsed.text?.contains("Full") == true },
                "every file in new/ is complete")
        #expect(outbox.names("tmp").isEmpty, "no partial file left in tmp/")
        let statuses = try db.query("SELECT status, count(*) FROM notification_logs GROUP BY status ORDER BY status")
        #expect(statuses == [["retry", "\(10 - fits)"], ["sent", "\(fits)"]])
        let errors = try db.query("SELECT last_error FROM notification_logs WHERE status = 'retry'").compactMap { $0[0] }
        #expect(errors.count == 10 - fits)
        #expect(errors.contains { $0.contains("outbox: No space left on device writing \(mount.path)") })
        #expect(errors.allSatisfy { $0.contains("No space left on device") || $0.contains("not attempted") })
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first?.first == "\(fits)")
        for file in written {
            #expect(try db.query("SELECT status FROM notification_logs WHERE message_id = $1", [file.messageID]).first?.first == "sent",
                    "each file is a message recorded as sent")
        }

        // Space is freed; the operator's `retry` delivers the rest, once.
        try FileManager.default.removeItem(atPath: "\(mount.path)/filler")
        let retry = try NotifierProcess.run(["retry", "--date", "2026-01-13"], environment: env)
        #expect(retry.status == 0, "retry: \(retry.stderr)")
        try expectOneMailEach(due, in: outbox, db: db)
        // Nothing is left to do.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try outbox.messages().count == 10)
    }

    @Test("read-only: nothing written, every alert kept as retry, exit 69 like an unreachable server; writable again, delivered once")
    func readOnly() throws {
        let mount = try TmpfsMount(size: "1m")
        defer { mount.unmount() }
        for sub in ["tmp", "new", "cur"] { try FileManager.default.createDirectory(atPath: "\(mount.path)/\(sub)", withIntermediateDirectories: false) }
        try mount.remount(readOnly: true)

        let db = try TestDatabase()
        var due: [String: String] = [:]
        for i in 1...5 {
            let email = "ro\(i)@outbox.example.com"
            due[try db.addUser(name: "RO \(i)", email: email, checkIns: ["2026-01-10"])] = email
        }
        // One writer, as in the SMTP server-down test: the give-up after 3 failures in a row is then deterministic.
        let env = try environment(db, outbox: mount.path, ["SMTP_CONNECTIONS": "1"])
        let outbox = OutboxFolder(path: mount.path)

        let check = try NotifierProcess.run(["check"], environment: env)
        #expect(check.status == 69)
        #expect(check.stderr.contains("FAIL outbox: Read-only file system writing \(mount.path)"))

        let first = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(first.status == 69, "nothing could be sent: \(first.stderr)")
        #expect(outbox.names("new").isEmpty && outbox.names("tmp").isEmpty)
        for user in due.keys {
            let row = try #require(try db.logs(user).first)
            #expect(row.status == "retry" && !row.emailSent)
        }
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE last_error LIKE '%Read-only file system%'").first?.first == "3")
        // After the give-up limit the rest are recorded without more attempts (as for a dead SMTP server).
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE last_error LIKE 'not attempted%'").first?.first == "2")

        try mount.remount(readOnly: false)
        let retry = try NotifierProcess.run(["retry", "--date", "2026-01-13"], environment: env)
        #expect(retry.status == 0, "retry: \(retry.stderr)")
        try expectOneMailEach(due, in: outbox, db: db)
    }
}
