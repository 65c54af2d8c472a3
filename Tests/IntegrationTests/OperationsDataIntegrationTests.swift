import Foundation
import Testing
@testable import Values
@testable import Store

/// What an operator's monitoring and storage see: the metrics file (parsed by Prometheus' own
/// Python parser), `RETENTION_DAYS`, and reads from a real hot standby (`DATABASE_READ_URL`).
@Suite("Metrics, retention and the read standby", .enabled(if: TestEnvironment.enabled))
struct OperationsDataIntegrationTests {
    /// The samples of a textfile-collector file as Prometheus' Python parser reads them:
    /// `name{labels}` (labels sorted, `k=v` joined by `,`) → value.
    static func parseMetrics(_ path: String) throws -> [String: Double] {
        let script = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            out = {}
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for s in family.samples:
                    labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                    out[s.name + ("{" + labels + "}" if labels else "")] = s.value
            print(json.dumps(out))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, path]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let problem = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("the metrics file does not parse: \(problem)") }
        return try JSONSerialization.jsonObject(with: data) as? [String: Double] ?? [:]
    }

    @Test("METRICS_FILE after a run: it parses with Prometheus' parser and its values are the run's counts")
    func metricsFile() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUser(name: "Sent", email: mail.address("sent"), checkIns: ["2026-01-10"])
        try db.addUser(name: "Failed", email: mail.address("perm550"), checkIns: ["2026-01-10"])
        try db.addUser(name: "Later", email: mail.address("temp451always"), checkIns: ["2026-01-10"])
        try db.addUser(name: "", email: mail.address("noname"), checkIns: ["2026-01-10"])
        try db.addUser(name: "Stale", email: mail.address("stale"), checkIns: ["2025-12-01"])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/sileme.prom"
        // Today, so that the failures are in the backlog of the open days.
        let today = CalendarDate(Date(), in: TimeZone(identifier: "Asia/Shanghai")!)
        try db.query("UPDATE check_ins SET check_in_date = check_in_date + ($1::date - DATE '2026-01-13')", [today.description])
        let env = try NotifierProcess.environment(database: db, ["METRICS_FILE": path, "SMTP_RETRY_ATTEMPTS": "1"])
        let before = Date().timeIntervalSince1970
        let result = try NotifierProcess.run(["--run-now", "--date", today.description], environment: env)
        #expect(result.status == 75, "\(result.stderr.suffix(800))")
        let metrics = try Self.parseMetrics(path)
        func outcome(_ name: String) -> Double? { metrics["sileme_notifier_last_run_notifications{kind=alert,outcome=\(name)}"] }
        #expect(metrics["sileme_notifier_build_info{version=\(NotifierVersion.current)}"] == 1)
        #expect(outcome("due") == 3 && outcome("sent") == 1 && outcome("failed") == 2)
        #expect(outcome("invalid_name") == 1 && outcome("stale") == 1 && outcome("already_notified") == 0)
        #expect(metrics["sileme_notifier_last_run_info{mode=run-now,run_date=\(today)}"] == 1)
        #expect(metrics["sileme_notifier_last_run_completed"] == 1)
        let started = try #require(metrics["sileme_notifier_last_run_timestamp_seconds"])
        #expect(started >= before - 1 && started <= Date().timeIntervalSince1970)
        #expect((metrics["sileme_notifier_last_run_duration_seconds"] ?? -1) >= 0)
        #expect(metrics["sileme_notifier_retry_backlog{status=retry}"] == 1)
        #expect(metrics["sileme_notifier_retry_backlog{status=failed}"] == 1)
        #expect(metrics["sileme_notifier_retry_backlog{status=sending}"] == 0)
        #expect(metrics["sileme_notifier_last_success_timestamp_seconds"] != nil)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(leftovers == ["sileme.prom"], "no temporary file left behind")
    }

    @Test("RETENTION_DAYS: the daemon's daily run deletes older notification and run rows in batches, keeps the rest and the summary right")
    func retention() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = DaemonIntegrationTests.localTime(offset: 4)
        let users = try DaemonIntegrationTests.addDueUsers(db, mail, today: fire.date, count: 2)
        // Old history: 1,200 accepted notifications and their runs, 40 to 100 days ago.
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status)
            SELECT u, $1::date - d, true, 2, 'sent' FROM unnest($2::uuid[]) u, generate_series(40, 639) d
            """, [fire.date.description, PGArray.literal(users)])
        try db.query("""
            INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, status, finished_at)
            SELECT $1::date - d, 'daemon', 'test', 1, 'completed', now() FROM generate_series(1, 100) d
            """, [fire.date.description])
        let env = try NotifierProcess.environment(database: db, ["NOTIFY_TIME": fire.time, "RETENTION_DAYS": "60"])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let cutoff = fire.date.adding(days: -60).description
        #expect(try DaemonIntegrationTests.eventually(30) {
            try db.query("SELECT count(*) FROM notification_logs WHERE notification_date < $1::date", [cutoff]).first?.first == "0"
                && db.query("SELECT count(*) FROM sileme.notifier_runs WHERE run_date < $1::date", [cutoff]).first?.first == "0"
        })
        kill(process.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0)
        // 579 days × 2 users (61 to 639 days old) and 40 runs (61 to 100 days old).
        let said = TestEnvironment.current?.journal == true
            ? try JournalReader.entries(of: result, minimum: 3).compactMap { $0["MESSAGE"] }.joined(separator: "\n") : result.stderr
        #expect(said.contains("retention: deleted 1158 notification rows and 40 runs dated before \(cutoff)"), "\(said.suffix(1500))")
        // Kept: 40–60 days old (21 days × 2 users), and today's two alerts, sent.
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE notification_date < $1::date", [fire.date.description]).first?.first == "42")
        #expect(try db.query("SELECT count(*) FILTER (WHERE email_sent) FROM notification_logs WHERE notification_date = $1::date",
                             [fire.date.description]).first?.first == "2")
        #expect(try db.query("SELECT count(*) FROM sileme.notifier_runs WHERE run_date >= $1::date", [cutoff]).first?.first == "61",
                "the 60 kept days of history and today's run")
        // The history report says that the days before the cutoff are gone.
        let report = try NotifierProcess.run(["report", "--from", fire.date.adding(days: -90).description, "--to", fire.date.description,
                                              "--format", "json"], environment: env)
        #expect(report.status == 0)
        #expect(report.stderr.contains("note: RETENTION_DAYS=60: notifications and runs dated before \(cutoff) are deleted"), "\(report.stderr)")
        // The summary the due query reads still has each user's latest accepted notification.
        for user in users {
            #expect(try db.query("SELECT last_notified_date::text FROM sileme.user_last_check_in WHERE user_id = $1::uuid", [user]).first?.first
                    == fire.date.description)
        }
    }

    @Test("DATABASE_READ_URL on a real hot standby: the dry run there equals the primary's, and the run itself writes to the primary")
    func readStandby() throws {
        let primary = try PostgresCluster()
        let db = try TestDatabase(cluster: primary)
        let mail = try Mailbox()
        let users = try (0..<6).map { index in
            try db.addUser(name: "备用\(index)", email: mail.address("standby\(index)"), checkIns: ["2026-01-\(9 + index % 3)"])
        }
        let standby = try PostgresCluster(standbyOf: primary)
        let readURL = standby.url(db.name)
        let replica = try PGConnection(Secret(readURL), schema: .standard)
        #expect(try replica.execute("SELECT pg_is_in_recovery()")[0].bool(0))
        /// Whether the standby replays, within a minute, everything the primary has written now.
        func caughtUp() throws -> Bool {
            // A commit first: the WAL writer flushes up to it within wal_writer_delay, with whatever
            // was written before it that no commit followed (a reader's hint-bit page images). Then
            // the insert position (with synchronous_commit off a commit may not be written yet),
            // read once: a target that moved at each poll could stay ahead of the flush. A minute:
            // the suites run side by side, and some load the machine for a while.
            _ = try db.query("SELECT txid_current()::text")
            let lsn = try db.query("SELECT pg_current_wal_insert_lsn()::text").first?.first ?? nil
            return try DaemonIntegrationTests.eventually(60) {
                try replica.execute("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", [lsn])[0].bool(0)
            }
        }
        #expect(try caughtUp())
        let dry = ["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"]
        let onPrimary = try NotifierProcess.run(dry, environment: try NotifierProcess.environment(database: db))
        // The standby reads the queued check-ins beside its summary, as the primary does.
        #expect(try caughtUp())
        let env = try NotifierProcess.environment(database: db, ["DATABASE_READ_URL": readURL])
        let onStandby = try NotifierProcess.run(dry, environment: env)
        #expect(onStandby.status == 0, "\(onStandby.stderr)")
        #expect(onStandby.stdout == onPrimary.stdout && onStandby.stdout.contains("\"send\""),
                "primary: \(onPrimary.stdout) \(onPrimary.stderr); standby: \(onStandby.stdout) \(onStandby.stderr)")
        #expect(try NotifierProcess.run(["check"], environment: env).stderr.contains("ok   read database: a hot standby answers"))
        // The run writes to the primary (a standby would refuse), and the standby follows.
        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(run.status == 0, "\(run.stderr.suffix(800))")
        // Last check-ins on the 9th and 10th are due (m = 3 and 2), the 11th's not yet.
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE email_sent").first?.first == "4")
        #expect(try caughtUp())
        let after = try NotifierProcess.run(dry, environment: env)
        let summary = (try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any])?["summary"] as? [String: Any]
        #expect(summary?["already_notified"] as? Int == 4 && summary?["send"] as? Int == 0, "the standby followed the run")
        let report = try NotifierProcess.run(["report", "--from", "2026-01-13", "--to", "2026-01-13", "--format", "json"], environment: env)
        #expect(report.status == 0, "\(report.stderr)")
        #expect((try? JSONSerialization.jsonObject(with: Data(report.stdout.utf8))) is [String: Any], "the history report read the standby")
        // A check-in nobody has folded yet: the standby reads it in the queue, and its dry run is
        // the primary's, exactly (no note of anything it could not see).
        try db.checkIn(users[0], "2026-01-14")
        #expect(try caughtUp())
        let later = ["--run-now", "--dry-run", "--date", "2026-01-15", "--format", "json"]
        let unfolded = try NotifierProcess.run(later, environment: env)
        #expect(unfolded.status == 0)
        let queued = try replica.execute("SELECT count(*) FROM sileme.check_in_queue")[0].int(0)
        let primaryLater = try NotifierProcess.run(later, environment: try NotifierProcess.environment(database: db))
        #expect(queued == 1 && unfolded.stdout == primaryLater.stdout && !unfolded.stderr.contains("not yet in the summary"),
                "\(unfolded.stderr); queued on the standby: \(queued ?? -1); primary: \(primaryLater.stdout); standby: \(unfolded.stdout)")
        let listed = (try JSONSerialization.jsonObject(with: Data(unfolded.stdout.utf8)) as? [String: Any])?["users"] as? [[String: Any]] ?? []
        #expect(!listed.contains { $0["user_id"] as? String == users[0] }, "the user who checked in on the 14th is not listed")
    }
}
