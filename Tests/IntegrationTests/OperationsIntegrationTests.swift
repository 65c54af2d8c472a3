import Foundation
import Testing

/// Schema, journald, `check`, and the exit codes of docs/interfaces.md.
@Suite("Operations on real servers", .enabled(if: TestEnvironment.enabled))
struct OperationsIntegrationTests {
    @Test("migrate creates the schema on an empty database and is idempotent")
    func migrateEmpty() throws {
        let db = try TestDatabase(migrate: false)
        let env = try NotifierProcess.environment(database: db)
        let first = try NotifierProcess.run(["migrate"], environment: env)
        #expect(first.status == 0)
        #expect(first.stderr.contains("applied: 001_app_tables.sql, 002_delivery_state.sql, 003_runs.sql"))
        let schema = try db.dump()
        let second = try NotifierProcess.run(["migrate"], environment: env)
        #expect(second.status == 0 && second.stderr.contains("schema is current"))
        #expect(try db.dump() == schema)
        #expect(try db.query("SELECT indexdef FROM pg_indexes WHERE indexname = 'notification_logs_delivery_key'").first?.first??
            .contains("UNIQUE INDEX") == true, "the claim key: (user, date, kind, channel, contact)")
    }

    @Test("migrate on the app's existing tables adds what is missing and changes no existing row")
    func migrateExisting() throws {
        let db = try TestDatabase(migrate: false)
        // The design doc's tables as the app created them (no claim key, no delivery state).
        try db.createDesignDocTables()
        try db.connection.executeScript("""
            INSERT INTO users (id, name, emergency_email) VALUES ('11111111-1111-1111-1111-111111111111', '老用户', 'old@example.com');
            INSERT INTO check_ins (user_id, check_in_date) VALUES ('11111111-1111-1111-1111-111111111111', '2026-01-01');
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days)
                VALUES ('11111111-1111-1111-1111-111111111111', '2026-01-04', true, 2);
            """)
        let snapshot = """
            SELECT (SELECT json_agg(json_build_object('id', id, 'name', name, 'emergency_email', emergency_email,
                        'created_at', created_at, 'updated_at', updated_at) ORDER BY id)::text FROM users u),
                   (SELECT json_agg(c ORDER BY id)::text FROM check_ins c),
                   (SELECT json_agg(json_build_object('id', id, 'user_id', user_id, 'notification_date', notification_date,
                        'email_sent', email_sent, 'consecutive_miss_days', consecutive_miss_days, 'created_at', created_at)
                        ORDER BY id)::text FROM notification_logs)
            """
        let before = try db.query(snapshot)
        let env = try NotifierProcess.environment(database: db)
        #expect(try NotifierProcess.run(["migrate"], environment: env).status == 0)
        #expect(try db.query(snapshot) == before)
        // The old row still counts: the streak that began 2026-01-01 was notified on 01-04.
        let report = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-05", "--format", "json"], environment: env)
        #expect(report.stdout.contains("\"decision\":\"already_notified\""))
    }

    @Test("migrate refuses to guess about duplicate log rows and changes nothing")
    func migrateDuplicates() throws {
        let db = try TestDatabase(migrate: false)
        try db.createDesignDocTables(only: ["users"])
        try db.connection.executeScript("""
            CREATE TABLE notification_logs (id BIGSERIAL PRIMARY KEY, user_id UUID NOT NULL, notification_date DATE NOT NULL,
                                            email_sent BOOLEAN DEFAULT FALSE, consecutive_miss_days INTEGER NOT NULL, created_at TIMESTAMP DEFAULT NOW());
            INSERT INTO notification_logs (user_id, notification_date, consecutive_miss_days) VALUES
                ('11111111-1111-1111-1111-111111111111', '2026-01-04', 2), ('11111111-1111-1111-1111-111111111111', '2026-01-04', 2);
            """)
        let result = try NotifierProcess.run(["migrate"], environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 1)
        #expect(result.stderr.contains("1 (user_id, notification_date) pairs with more than one row"))
        #expect(try db.query("SELECT count(*) FROM notification_logs").first?.first == "2")
        #expect(try db.query("SELECT count(*) FROM information_schema.columns WHERE table_name = 'notification_logs' AND column_name = 'status'").first?.first == "0")
    }

    @Test("journald gets every event of a run by hand, with the spec's fields, and no full address",
          .enabled(if: TestEnvironment.current?.journal == true))
    func journal() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let sent = try db.addUser(name: "Journal", email: mail.address("journal"), checkIns: ["2026-01-10"])
        let failed = try db.addUser(name: "Failed", email: mail.address("perm550"), checkIns: ["2026-01-10"])
        let skipped = try db.addUser(name: "", email: mail.address("skip"), checkIns: ["2026-01-10"])
        let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 75)
        let entries = try JournalReader.entries(of: result, minimum: 5)
        let byEvent = Dictionary(grouping: entries, by: { $0["NOTIFIER_EVENT"] ?? "" })
        #expect(Set(byEvent.keys) == ["run_started", "notification_sent", "notification_failed", "notification_skipped", "run_finished"])
        for entry in entries {
            #expect(entry["SYSLOG_IDENTIFIER"] == "sileme-notifier")
            #expect(entry["RUN_DATE"] == "2026-01-13")
            #expect(entry["PRIORITY"] != nil && entry["MESSAGE_ID"] != nil && entry["CODE_FILE"] != nil)
            #expect(!entry.values.contains { $0.contains("@\(mail.domain)") && !$0.contains("***@") }, "no full address")
        }
        let sentEntry = try #require(byEvent["notification_sent"]?.first)
        #expect(sentEntry["USER_ID"] == sent && sentEntry["MISS_DAYS"] == "2" && sentEntry["PRIORITY"] == "6")
        #expect(sentEntry["RECIPIENT"] == "j***@\(mail.domain)")
        #expect(byEvent["notification_failed"]?.first?["USER_ID"] == failed)
        #expect(byEvent["notification_failed"]?.first?["PRIORITY"] == "3")
        #expect(byEvent["notification_skipped"]?.first?["USER_ID"] == skipped)
        let finished = try #require(byEvent["run_finished"]?.first)
        #expect(finished["SENT"] == "1" && finished["FAILED"] == "1" && finished["INVALID_NAME"] == "1" && finished["DUE"] == "2")
        // By hand, a readable summary also goes to the terminal.
        #expect(result.stderr.contains("run finished for 2026-01-13: 1 sent, 1 failed, 1 skipped"))
    }

    @Test("with no journal running, every event goes to standard error instead",
          .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
    func noJournal() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "NoJournal", email: mail.address("nojournal"), checkIns: ["2026-01-10"])
        // A private mount namespace where /run is an empty tmpfs: no journal socket.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["--mount", "/bin/sh", "-c",
                             "mount -t tmpfs tmpfs /run && exec \"$0\" \"$@\"",
                             NotifierProcess.executable, "--run-now", "--date", "2026-01-13"]
        process.environment = try NotifierProcess.environment(database: db)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty, "stdout is for reports only")
        for event in ["run_started", "notification_sent", "run_finished"] {
            #expect(result.stderr.contains("NOTIFIER_EVENT=\(event)"), "\(event) on stderr")
        }
        #expect(result.stderr.contains("USER_ID=\(user)"))
        #expect(!result.stderr.contains(mail.address("nojournal")), "the address is masked on stderr too")
    }

    @Test("exit codes: 78 naming the setting, 69 for an unreachable database, 64 for bad arguments")
    func exitCodes() throws {
        let db = try TestDatabase()
        let base = try NotifierProcess.environment(database: db)
        let badPort = try NotifierProcess.run(["--run-now"], environment: base.merging(["SMTP_PORT": "seventy"]) { $1 })
        #expect(badPort.status == 78)
        #expect(badPort.stderr.contains("SMTP_PORT"))
        let noFrom = try NotifierProcess.run(["--run-now"], environment: base.merging(["FROM_EMAIL": ""]) { $1 })
        #expect(noFrom.status == 78 && noFrom.stderr.contains("FROM_EMAIL"))
        let secret = "pw-\(UUID().uuidString)"
        let noDB = try NotifierProcess.run(["--run-now"], environment: base.merging(["DATABASE_URL": "postgresql://u:\(secret)@127.0.0.1:1/x"]) { $1 })
        #expect(noDB.status == 69)
        #expect(!noDB.stderr.contains(secret), "no secret in error messages")
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-02-30"], environment: base).status == 64)
        #expect(try NotifierProcess.run(["--dry-run"], environment: base).status == 64)
    }

    @Test("check says what works and what does not, and how many check-ins wait to be folded")
    func check() throws {
        let db = try TestDatabase()
        let good = try NotifierProcess.run(["check"], environment: try NotifierProcess.environment(database: db))
        #expect(good.status == 0)
        #expect(good.stderr.contains("ok   mail server") && good.stderr.contains("TLS verified") && good.stderr.contains("schema current"))
        #expect(good.stderr.contains("ok   check-in queue: empty"))
        // Check-ins nobody has folded: counted; older than a minute, a warning (not a failure).
        let user = try db.addUser(name: "张三", email: "a@example.com", checkIns: ["2026-03-01", "2026-03-02"])
        let fresh = try NotifierProcess.run(["check"], environment: try NotifierProcess.environment(database: db))
        #expect(fresh.status == 0)
        #expect(fresh.stderr.contains("ok   check-in queue: 2 check-in(s) waiting, the oldest for"), "\(fresh.stderr)")
        try db.query("UPDATE sileme.check_in_queue SET queued_at = now() - interval '10 minutes' WHERE user_id = $1", [user])
        let stale = try NotifierProcess.run(["check"], environment: try NotifierProcess.environment(database: db))
        #expect(stale.status == 0)
        #expect(stale.stderr.contains("warn check-in queue: 2 check-in(s) waiting, the oldest for 60"), "\(stale.stderr)")
        #expect(stale.stderr.contains("no notifier has folded them for over a minute (is the daemon running?)"))
        try db.foldCheckIns()
        #expect(try NotifierProcess.run(["check"], environment: try NotifierProcess.environment(database: db)).stderr
                    .contains("ok   check-in queue: empty"))
        let wrongPassword = try NotifierProcess.run(["check"], environment: try NotifierProcess.environment(database: db, ["SMTP_PASSWORD": "wrong-secret-xyz"]))
        #expect(wrongPassword.status == 69)
        #expect(wrongPassword.stderr.contains("FAIL mail server"))
        #expect(!wrongPassword.stderr.contains("wrong-secret-xyz"))
        let unmigrated = try TestDatabase(migrate: false)
        let pending = try NotifierProcess.run(["check"], environment: try NotifierProcess.environment(database: unmigrated))
        #expect(pending.status == 1 && pending.stderr.contains("migrations pending"))
        #expect(!pending.stderr.contains("check-in queue"))
    }
}
