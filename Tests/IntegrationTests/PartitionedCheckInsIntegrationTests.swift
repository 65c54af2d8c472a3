import Foundation
@testable import Store
import Testing
import Values

/// The app's `check_ins` partitioned by month with pg_partman (Debian's `postgresql-15-partman`),
/// on real PostgreSQL (docs/operating.md, "Partitioning check_ins"): partitioned before the
/// notifier is installed, where every decision must equal the same data's on a plain table; and
/// converted under a running installation, where the notifier's triggers stay on the renamed old
/// table — the runs must refuse until `migrate` puts them on the new one, and no user who checked
/// in meanwhile may be alerted.
@Suite("check_ins partitioned by month with pg_partman", .enabled(if: TestEnvironment.enabled))
struct PartitionedCheckInsIntegrationTests {
    /// The app's `check_ins` as a partitioned table must have it: the partition key in every
    /// unique constraint (the primary key becomes `(id, check_in_date)`).
    static let partitionedCheckIns = """
        CREATE TABLE check_ins (id BIGSERIAL, user_id UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                                check_in_date DATE NOT NULL, check_in_time TIMESTAMP DEFAULT NOW(),
                                created_at TIMESTAMP DEFAULT NOW(),
                                PRIMARY KEY (id, check_in_date), UNIQUE (user_id, check_in_date))
            PARTITION BY RANGE (check_in_date)
        """

    /// The app's conversion, as docs/operating.md shows it: a partitioned table, the rows copied,
    /// the names swapped, in one transaction.
    static func convert(_ db: TestDatabase) throws {
        try db.connection.executeScript("""
            CREATE SCHEMA partman;
            CREATE EXTENSION pg_partman SCHEMA partman;
            BEGIN;
            CREATE TABLE check_ins_partitioned (LIKE check_ins INCLUDING DEFAULTS, PRIMARY KEY (id, check_in_date),
                                                UNIQUE (user_id, check_in_date),
                                                FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE)
                PARTITION BY RANGE (check_in_date);
            ALTER TABLE check_ins RENAME TO check_ins_old;
            ALTER TABLE check_ins_partitioned RENAME TO check_ins;
            SELECT partman.create_parent('public.check_ins', 'check_in_date', 'native', 'monthly', p_start_partition := '2025-12-01');
            INSERT INTO check_ins SELECT * FROM check_ins_old;
            ALTER SEQUENCE check_ins_id_seq OWNED BY check_ins.id;
            COMMIT;
            """)
    }

    /// A database whose `check_ins` pg_partman partitions by month from `start` (two months made
    /// ahead of today, a default partition), created before the notifier's `migrate`.
    static func partitionedDatabase(from start: CalendarDate) throws -> TestDatabase {
        let db = try TestDatabase(migrate: false)
        try db.createDesignDocTables(only: ["users"])
        try db.connection.executeScript("""
            CREATE SCHEMA partman;
            CREATE EXTENSION pg_partman SCHEMA partman;
            \(Self.partitionedCheckIns);
            SELECT partman.create_parent('public.check_ins', 'check_in_date', 'native', 'monthly',
                                         p_premake := 2, p_start_partition := '\(start)');
            """)
        try Migrator(directory: TestDatabase.migrationsDirectory).migrate(db.connection)
        return db
    }

    /// The first day of the month `offset` months from `date`'s.
    static func month(_ date: CalendarDate, _ offset: Int) -> CalendarDate {
        let (year, month, _) = date.components
        let index = year * 12 + (month - 1) + offset
        return CalendarDate(year: index / 12, month: index % 12 + 1, day: 1)!
    }

    /// The partitions of `check_ins`, by name.
    static func partitions(_ db: TestDatabase) throws -> [String] {
        try db.query("""
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'check_ins'::regclass ORDER BY c.relname
            """).compactMap { $0[0] }
    }

    /// Where each of the notifier's check-in triggers is defined (not the partitions' clones): `table.trigger`.
    static func triggers(_ db: TestDatabase) throws -> [String] {
        try db.query("""
            SELECT t.tgrelid::regclass::text || '.' || t.tgname FROM pg_trigger t
            WHERE t.tgname = ANY ($1::text[]) AND t.tgparentid = 0 ORDER BY 1
            """, [PGArray.literal(CheckInTriggers.names)]).compactMap { $0[0] }
    }

    /// The dry run's users for `date`: id → (decision, consecutive misses, last check-in).
    static func dryRun(_ db: TestDatabase, _ date: CalendarDate) throws -> [String: [String]] {
        let result = try NotifierProcess.run(["--run-now", "--dry-run", "--date", date.description, "--format", "json"],
                                             environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let users = try #require(object["users"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: users.map { user in
            (user["user_id"] as? String ?? "?", [user["decision"] as? String ?? "?", "\(user["consecutive_miss_days"] ?? "?")",
                                                   user["last_check_in_date"] as? String ?? "?"])
        })
    }

    /// What the runs wrote: (user, date, kind, sent, misses), ordered.
    static func logs(_ db: TestDatabase) throws -> [[String?]] {
        try db.query("""
            SELECT user_id::text, notification_date::text, kind, email_sent::text, consecutive_miss_days::text
            FROM notification_logs ORDER BY user_id, notification_date, kind
            """)
    }

    @Test("partitioned before migrate: the triggers reach every partition, one partman makes later too; the dry run, --run-now and the all-clear equal a plain table's")
    func partitionedBeforeMigrate() throws {
        let today = CalendarDate(Date(), in: TimeZone(identifier: "UTC")!)
        let partitioned = try Self.partitionedDatabase(from: Self.month(today, -2))
        let before = try Self.partitions(partitioned)
        // Maintenance makes the next months' partitions, after migrate.
        try partitioned.connection.executeScript("""
            UPDATE partman.part_config SET premake = 4, infinite_time_partitions = true WHERE parent_table = 'public.check_ins';
            SELECT partman.run_maintenance('public.check_ins');
            """)
        let made = Set(try Self.partitions(partitioned)).subtracting(before)
        let newMonth = Self.month(today, 4)
        let newPartition = "check_ins_p" + newMonth.description.prefix(7).replacingOccurrences(of: "-", with: "_")
        #expect(made.contains(newPartition), "maintenance made \(made.sorted())")
        #expect(try Self.triggers(partitioned) == CheckInTriggers.names.map { "check_ins.\($0)" })
        #expect(CheckInTriggers.problem(try CheckInTriggers.find(partitioned.connection)) == nil)

        // The same users and check-ins on a plain table.
        let plain = try TestDatabase()
        let mail = try Mailbox()
        let runDate = newMonth.adding(days: 2)
        let fine = UUID().uuidString.lowercased(), due = UUID().uuidString.lowercased()
        let spread = UUID().uuidString.lowercased(), stale = UUID().uuidString.lowercased()
        let notified = UUID().uuidString.lowercased()
        let checkIns: [(String, [CalendarDate])] = [
            (fine, [runDate.adding(days: -1)]),                                   // the new partition
            (due, [Self.month(today, 1), runDate.adding(days: -3)]),               // last: the month before, also made by maintenance
            (spread, [Self.month(today, -2), Self.month(today, 1).adding(days: 9), runDate.adding(days: -4)]),
            (stale, [Self.month(today, -7)]),                                      // before the first partition: the default one
            (notified, [runDate.adding(days: -3)]),
        ]
        for db in [partitioned, plain] {
            for (user, days) in checkIns {
                try db.query("INSERT INTO users (id, name, emergency_email) VALUES ($1, $2, $3)", [user, "User", mail.address(String(user.prefix(8)))])
                for day in days { try db.checkIn(user, day.description) }
            }
            try db.query("""
                INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status)
                VALUES ($1, $2, true, 1, 'sent')
                """, [notified, runDate.adding(days: -1).description])
        }
        let placed = try partitioned.query("SELECT DISTINCT tableoid::regclass::text FROM check_ins ORDER BY 1").compactMap { $0[0] }
        #expect(placed.contains("check_ins_default") && placed.contains(newPartition) && placed.count >= 5, "\(placed)")

        // The dry run, before any fold (it reads the queue) and after one.
        let expected: [String: [String]] = [
            due: ["send", "2", runDate.adding(days: -3).description],
            spread: ["send", "3", runDate.adding(days: -4).description],
            stale: ["stale", "\(runDate.days(since: Self.month(today, -7)) - 1)", Self.month(today, -7).description],
            notified: ["already_notified", "2", runDate.adding(days: -3).description],
        ]
        #expect(try Self.dryRun(partitioned, runDate) == expected)
        #expect(try Self.dryRun(plain, runDate) == expected)
        try partitioned.foldCheckIns()
        #expect(try Self.dryRun(partitioned, runDate) == expected)

        // --run-now: the same alerts.
        let env = { (db: TestDatabase) in try NotifierProcess.environment(database: db) }
        for db in [partitioned, plain] {
            let run = try NotifierProcess.run(["--run-now", "--allow-future-date", "--date", runDate.description], environment: try env(db))
            #expect(run.status == 0, "\(run.stderr)")
        }
        let alerts = try Self.logs(partitioned)
        #expect(alerts == (try Self.logs(plain)))
        #expect(alerts.filter { $0[1] == runDate.description && $0[3] == "true" }.map { [$0[0], $0[2]] } == [due, spread].sorted().map { [$0, "alert"] })

        // A check-in into the partition maintenance made ends the alert: the all-clear.
        for db in [partitioned, plain] {
            try db.checkIn(due, runDate.description)
            try db.foldCheckIns()
            #expect(try db.query("SELECT user_id::text FROM sileme.pending_all_clears").compactMap { $0[0] } == [due])
            let run = try NotifierProcess.run(["--run-now", "--allow-future-date", "--date", runDate.adding(days: 1).description],
                                              environment: try env(db))
            #expect(run.status == 0, "\(run.stderr)")
        }
        #expect(try partitioned.query("SELECT tableoid::regclass::text FROM check_ins WHERE user_id = $1 AND check_in_date = $2",
                                      [due, runDate.description]).first?.first == newPartition)
        let after = try Self.logs(partitioned)
        #expect(after == (try Self.logs(plain)))
        #expect(after.filter { $0[0] == due }.map { $0[2] } == ["alert", "all_clear"])
    }

    @Test("three years of monthly partitions: a user's latest trusted check-in probes the last month's partitions only, and is max() all the same")
    func latestTrustedCheckInPrunes() throws {
        let trusted = CalendarDate(parsing: "2026-11-29")!
        let db = try Self.partitionedDatabase(from: Self.month(trusted, -35))
        #expect(try Self.partitions(db).count >= 38)
        // Recent; only two years ago; a future-dated row and a recent one; a row on the bound's
        // edge (31 days before `trusted`, outside the first probe); none at all.
        let days: [String: [CalendarDate]] = [
            "recent": [trusted.adding(days: -400), trusted.adding(days: -3)],
            "old": [trusted.adding(days: -730)],
            "future": [trusted.adding(days: -20), CalendarDate(parsing: "2099-01-01")!],
            "edge": [trusted.adding(days: -31)],
            "none": [],
        ]
        var ids: [String: String] = [:]
        for (name, dates) in days {
            let id = UUID().uuidString.lowercased()
            ids[name] = id
            try db.query("INSERT INTO users (id, name, emergency_email) VALUES ($1, $2, $3)", [id, name, "\(name)@example.com"])
            for date in dates { try db.checkIn(id, date.description) }
        }
        _ = try db.query("ANALYZE check_ins")
        let probe = "SELECT \(GuardSQL.latestTrustedCheckIn("$1::uuid", trusted: "$2::date"))"
        let plain = "SELECT max(check_in_date) FROM check_ins WHERE user_id = $1::uuid AND check_in_date <= $2::date"
        for (name, id) in ids {
            #expect(try db.query(probe, [id, trusted.description]) == (try db.query(plain, [id, trusted.description])), "\(name)")
        }
        #expect(try db.query(probe, [ids["edge"]!, trusted.description]).first?.first == trusted.adding(days: -31).description)
        #expect(try db.query(probe, [ids["none"]!, trusted.description]).first?.first == .some(nil))
        // The partitions' index scans each statement ran.
        func scans(_ sql: String, _ id: String) throws -> Int {
            let text = try #require(try db.query("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, [id, trusted.description]).first?.first ?? nil)
            let plan = try #require((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])?.first?["Plan"] as? [String: Any])
            func count(_ node: [String: Any]) -> Int {
                let ran = (node["Node Type"] as? String)?.hasSuffix("Scan") == true && (node["Actual Loops"] as? Int ?? 0) > 0 ? 1 : 0
                return ran + ((node["Plans"] as? [[String: Any]]) ?? []).map(count).reduce(0, +)
            }
            return count(plan)
        }
        #expect(try scans(plain, ids["recent"]!) >= 30, "max() alone probes every month")
        #expect(try scans(probe, ids["recent"]!) <= 2)
        #expect(try scans(probe, ids["future"]!) <= 2)
    }

    @Test("converted under a migrated installation: every run, the dry run and check refuse naming migrate; migrate reinstalls and rebuilds; no false alarm")
    func convertedAfterMigrate() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let env = try NotifierProcess.environment(database: db)
        let alerted = try db.addUser(name: "Alerted", email: mail.address("alerted"), checkIns: ["2026-01-08"])
        let back = try db.addUser(name: "Back", email: mail.address("back"), checkIns: ["2026-01-10"])
        let missing = try db.addUser(name: "Missing", email: mail.address("missing"), checkIns: ["2026-01-10"])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-11"], environment: env).status == 0)
        #expect(try Self.logs(db).map { $0[0] } == [alerted])

        // The app converts.
        try Self.convert(db)
        #expect(try Self.triggers(db) == CheckInTriggers.names.map { "check_ins_old.\($0)" }, "the triggers stayed with the old table")
        // Two users check in afterwards: nothing reaches the notifier.
        try db.checkIn(alerted, "2026-01-12")
        try db.checkIn(back, "2026-01-12")
        try db.foldCheckIns()
        #expect(try db.query("SELECT last_check_in_date::text FROM sileme.user_last_check_in WHERE user_id = $1", [back]).first?.first == "2026-01-10",
                "the summary went stale")

        // Every way in refuses, naming the remedy, and writes nothing.
        let before = try db.dump()
        for arguments in [["--run-now", "--date", "2026-01-13"], ["--run-now", "--dry-run", "--date", "2026-01-13"],
                          ["retry", "--date", "2026-01-13"]] {
            let refused = try NotifierProcess.run(arguments, environment: env)
            #expect(refused.status == 78, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("triggers on check_ins (it is partitioned"), "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("Run `sileme-notifier migrate`"), "\(arguments): \(refused.stderr)")
        }
        // The daemon does not start (before READY): exit 78, the reason in its journal.
        let daemon = try NotifierProcess.run([], environment: env)
        #expect(daemon.status == 78, "\(daemon.stderr)")
        let said = try JournalReader.entries(of: daemon).compactMap { $0["MESSAGE"] }.joined(separator: "\n") + daemon.stderr
        #expect(said.contains("triggers on check_ins (it is partitioned") && said.contains("Run `sileme-notifier migrate`"), "\(said)")
        let check = try NotifierProcess.run(["check"], environment: env)
        #expect(check.status == 78, "\(check.stdout + check.stderr)")
        #expect((check.stdout + check.stderr).contains("FAIL check-in triggers: the notifier's triggers on check_ins"), "\(check.stdout + check.stderr)")
        #expect(try db.dump() == before, "nothing written, nothing sent")

        // migrate: the triggers on the new table, none left on the old one, the summary rebuilt.
        let migrate = try NotifierProcess.run(["migrate"], environment: env)
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(migrate.stderr.contains("installed " + CheckInTriggers.names.joined(separator: ", ")), "\(migrate.stderr)")
        #expect(try Self.triggers(db) == CheckInTriggers.names.map { "check_ins.\($0)" })
        let again = try NotifierProcess.run(["migrate"], environment: env)
        #expect(again.status == 0 && !again.stderr.contains("installed"), "a second migrate changes nothing: \(again.stderr)")
        try db.query("TRUNCATE check_ins_old")
        #expect(try db.query("SELECT count(*) FROM sileme.user_last_check_in").first?.first == "3", "the old table's TRUNCATE no longer empties the summary")
        let checked = try NotifierProcess.run(["check"], environment: env)
        #expect((checked.stdout + checked.stderr).contains("ok   check-in triggers: 4 on check_ins (partitioned: on every partition)"), "\(checked.stdout + checked.stderr)")

        // The run is right again: the one who missed is alerted; the one who came back is not; the
        // alerted one who checked in while the triggers were missing gets the all-clear.
        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        let logs = try Self.logs(db)
        #expect(logs.filter { $0[0] == back }.isEmpty, "no false alarm for a check-in made after the conversion")
        #expect(logs.filter { $0[0] == missing }.map { [$0[1], $0[2], $0[3]] } == [["2026-01-13", "alert", "true"]])
        #expect(logs.filter { $0[0] == alerted }.map { [$0[2], $0[3]] } == [["alert", "true"], ["all_clear", "true"]])
        // And a new check-in reaches the notifier through the new table's triggers.
        try db.checkIn(missing, "2026-01-13")
        #expect(try db.query("SELECT check_in_date::text FROM sileme.check_in_queue WHERE user_id = $1", [missing]).compactMap { $0[0] } == ["2026-01-13"])
        // The daemon starts again and answers that check-in with its all-clear.
        let restarted = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env.merging(["ALL_CLEAR_POLL_SECONDS": "1"]) { $1 })
        defer { if restarted.0.isRunning { kill(restarted.0.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(60) {
            try Self.logs(db).contains { $0[0] == missing && $0[2] == "all_clear" && $0[3] == "true" }
        }, "the daemon's all-clear within 60 s")
        kill(restarted.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(restarted.0, restarted.1, restarted.2).status == 0)
    }

    @Test("converted while the daemon runs: the day's run fails with run_failed naming migrate and sends nothing; after migrate the run alerts only who missed")
    func convertedWhileDaemonRuns() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = DaemonIntegrationTests.localTime(offset: 20)  // room to start and convert before it
        try DaemonIntegrationTests.completedRun(db, on: fire.date.adding(days: -1))
        let due = try DaemonIntegrationTests.addDueUsers(db, mail, today: fire.date, count: 2)
        let back = try db.addUser(name: "Back", email: mail.address("back"), checkIns: [fire.date.adding(days: -3).description])
        let notify = try NotifySocket()
        defer { notify.shutdown() }
        let env = try NotifierProcess.environment(database: db, ["NOTIFY_TIME": fire.time, "NOTIFY_SOCKET": notify.path])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(notify.waitFor(10) { $0.contains("READY=1") } != nil, "started on the plain table")
        try Self.convert(db)
        try db.checkIn(back, fire.date.adding(days: -1).description)
        var failed: [String: String]?
        #expect(DaemonIntegrationTests.eventually(60) {
            failed = (try? JournalReader.entries(pid: process.processIdentifier, minimum: 1, timeout: 1))?
                .first { $0["MESSAGE"]?.contains("triggers on check_ins") == true }
            return failed != nil
        }, "the day's run refused")
        #expect(failed?["NOTIFIER_EVENT"] == "run_failed", "\(failed ?? [:])")
        #expect(failed?["MESSAGE"]?.hasPrefix("run for \(fire.date) failed") == true, "\(failed ?? [:])")
        #expect(failed?["MESSAGE"]?.contains("Run `sileme-notifier migrate`") == true)
        #expect(try mail.deliveries().isEmpty && Self.logs(db).isEmpty, "nothing sent, nothing written")
        kill(process.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(process, out, err).status == 0)

        #expect(try NotifierProcess.run(["migrate"], environment: env).status == 0)
        #expect(try NotifierProcess.run(["--run-now", "--date", fire.date.description], environment: env).status == 0)
        #expect(try Self.logs(db).filter { $0[3] == "true" }.map { $0[0] } == due.sorted().map(Optional.some), "no alert for who came back")
    }
}
