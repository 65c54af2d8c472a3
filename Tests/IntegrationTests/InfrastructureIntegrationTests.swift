import Foundation
import Testing
@testable import Values
@testable import Store

/// What the app and its infrastructure do to a run: row-level security (the design doc's
/// policies), accounts deleted while a run sends, and a mistyped future `--date`. The connection
/// poolers have their own suite (`PoolerIntegrationTests`).
@Suite("The app and its infrastructure", .enabled(if: TestEnvironment.enabled))
struct InfrastructureIntegrationTests {
    static let date = "2026-01-13"

    /// The design doc's row-level security, as a Supabase project has it: users read and write
    /// only their own rows (`auth.uid()`, which is NULL for anyone but a signed-in app user).
    static func enableDesignDocPolicies(_ db: TestDatabase) throws {
        try db.connection.executeScript("""
            CREATE SCHEMA IF NOT EXISTS auth;
            CREATE OR REPLACE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE AS
                $$ SELECT nullif(current_setting('request.jwt.claim.sub', true), '')::uuid $$;
            GRANT USAGE ON SCHEMA auth TO PUBLIC;
            ALTER TABLE users ENABLE ROW LEVEL SECURITY;
            CREATE POLICY users_own ON users FOR ALL USING (id = auth.uid()) WITH CHECK (id = auth.uid());
            ALTER TABLE check_ins ENABLE ROW LEVEL SECURITY;
            CREATE POLICY check_ins_own_read ON check_ins FOR SELECT USING (user_id = auth.uid());
            CREATE POLICY check_ins_own_insert ON check_ins FOR INSERT WITH CHECK (user_id = auth.uid());
            ALTER TABLE notification_logs ENABLE ROW LEVEL SECURITY;
            """)
    }

    /// A least-privilege role of this test's own (`config/least-privilege.sql` with its name) and
    /// the environment of a run as that role; the role is dropped by `drop`.
    static func restrictedRole(_ db: TestDatabase) throws -> (role: String, url: String, drop: () -> Void) {
        let role = "sileme_notifier_\(db.name.suffix(8))"
        let sql = try String(contentsOf: TestEnvironment.root.appendingPathComponent("config/least-privilege.sql"), encoding: .utf8)
        try db.connection.executeScript(sql.replacingOccurrences(of: "sileme_notifier", with: role))
        let env = try TestEnvironment.require()
        return (role, "postgresql://\(role)@127.0.0.1:\(env.pgPort)/\(db.name)", {
            _ = try? db.connection.executeScript("REASSIGN OWNED BY \(role) TO postgres; DROP OWNED BY \(role); DROP ROLE \(role)")
        })
    }

    @Test("the design doc's row-level security: the owner mails everyone due; the least-privilege role mails everyone through its own policy, and without it refuses with exit 78 naming the table — never a quiet zero")
    func rowLevelSecurity() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let users = try (0..<5).map { try db.addUser(name: "RLS \($0)", email: mail.address("rls\($0)"), checkIns: ["2026-01-10"]) }
        try Self.enableDesignDocPolicies(db)
        let (role, url, drop) = try Self.restrictedRole(db)
        defer { drop() }
        let asRole = try NotifierProcess.environment(database: db, ["DATABASE_URL": url])

        // Without a policy of its own the role would see no user at all: every command refuses.
        try db.connection.executeScript("DROP POLICY sileme_notifier_\(db.name.suffix(8))_read ON users")
        let before = try db.dump()
        let check = try NotifierProcess.run(["check"], environment: asRole)
        #expect(check.status == 78)
        #expect(check.stderr.contains("FAIL row security") && check.stderr.contains("table users"), "\(check.stderr)")
        #expect(check.stderr.contains("role \(role)"))
        for arguments in [["--run-now", "--dry-run", "--date", Self.date, "--format", "json"],
                          ["--run-now", "--date", Self.date], ["retry", "--date", Self.date]] {
            let result = try NotifierProcess.run(arguments, environment: asRole)
            #expect(result.status == 78, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("row-level security on table users"), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "no report of nobody")
        }
        #expect(try db.dump() == before, "nothing written")
        #expect(try mail.deliveries().isEmpty)

        // With config/least-privilege.sql's policy the role sees and mails everyone due.
        try db.connection.executeScript(
            "CREATE POLICY sileme_notifier_\(db.name.suffix(8))_read ON users FOR SELECT TO \(role) USING (true)")
        #expect(try NotifierProcess.run(["check"], environment: asRole).status == 0)
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--date", Self.date, "--format", "json"], environment: asRole)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect((report["users"] as? [[String: Any]])?.count == 5)
        let run = try NotifierProcess.run(["--run-now", "--date", Self.date], environment: asRole)
        #expect(run.status == 0, "\(run.stderr.suffix(1500))")
        #expect(Set(try mail.deliveries().map(\.recipient)) == Set((0..<5).map { mail.address("rls\($0)") }))
        for user in users { #expect(try db.logs(user).map(\.emailSent) == [true]) }

        // The tables' owner (here a superuser) is not filtered: its dry run lists the same five.
        let owner = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-14", "--format", "json"],
                                           environment: try NotifierProcess.environment(database: db))
        #expect(owner.status == 0)
        let ownerReport = try #require(try JSONSerialization.jsonObject(with: Data(owner.stdout.utf8)) as? [String: Any])
        #expect((ownerReport["summary"] as? [String: Any])?["already_notified"] as? Int == 5)
    }

    @Test("accounts deleted while a slow run sends: every remaining due user is mailed in that run, exit 0, the deleted ones counted as gone")
    func deletedDuringRun() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUsers(count: 100, domain: mail.domain, lastCheckIn: "2026-01-10")
        // The run claims and sends in user-id order: the ten last ids are claimed last.
        let ids = try db.query("SELECT id::text FROM users ORDER BY id").compactMap { $0[0] }
        let deleted = Array(ids.suffix(10))
        let env = try NotifierProcess.environment(database: db, ["SMTP_CONNECTIONS": "1", "SMTP_RATE_LIMIT": "25"])
        let (process, out, err) = try NotifierProcess.start(["--run-now", "--date", Self.date], environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(try DaemonIntegrationTests.eventually(10) { try mail.deliveries().count >= 10 })
        // The app deletes the accounts (cascading to their check-ins and any notification rows).
        try db.query("DELETE FROM users WHERE id = ANY($1::uuid[])", [PGArray.literal(deleted)])
        let mailedBeforeDeletion = try mail.deliveries().count
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0, "\(result.stderr.suffix(1500))")
        #expect(mailedBeforeDeletion < 60, "the deletion came while the run was sending")
        let recipients = Set(try mail.deliveries().map(\.recipient))
        let remaining = Set(ids.dropLast(10))
        let addresses = try Dictionary(uniqueKeysWithValues: db.query("SELECT id::text, lower(emergency_email) FROM users")
            .map { ($0[0]!, $0[1]!) })
        #expect(remaining.allSatisfy { addresses[$0].map(recipients.contains) == true }, "every remaining due user mailed")
        #expect(try mail.deliveries().count == 90, "none of the deleted users mailed, nobody twice")
        #expect(try db.query("SELECT gone, sent, status FROM sileme.notifier_runs").first == ["10", "90", "completed"])
        #expect(result.stderr.contains("10 deleted during the run"))
    }

    @Test("--run-now and retry refuse a --date after today (exit 64, nothing written or sent); the dry run takes it; --allow-future-date runs")
    func futureDate() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let zone = TimeZone(identifier: "Asia/Shanghai")!
        let today = CalendarDate(Date(), in: zone)
        let future = today.adding(days: 3).description
        // Checked in today: a run three days ahead would count two missed days from today.
        try db.addUser(name: "Today", email: mail.address("today"), checkIns: [today.description])
        let env = try NotifierProcess.environment(database: db)
        let before = try db.dump()
        for arguments in [["--run-now", "--date", future], ["retry", "--date", future]] {
            let result = try NotifierProcess.run(arguments, environment: env)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains("--date \(future) is after today (\(today) in Asia/Shanghai)"), "\(result.stderr)")
        }
        #expect(try db.dump() == before, "nothing written")
        #expect(try mail.deliveries().isEmpty)
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--date", future, "--format", "json"], environment: env)
        #expect(dry.status == 0)
        #expect(dry.stdout.contains("\"decision\":\"send\"") || dry.stdout.contains("\"decision\" : \"send\""), "looking ahead shows the alert")
        #expect(try NotifierProcess.run(["--run-now", "--date", today.description], environment: env).status == 0)
        #expect(try mail.deliveries().isEmpty, "today itself is fine to run")
        let forced = try NotifierProcess.run(["--run-now", "--allow-future-date", "--date", future], environment: env)
        #expect(forced.status == 0)
        #expect(try mail.deliveries().count == 1, "an operator who really means it can")
    }

    @Test("--at INSTANT: the run date is the latest NOTIFY_TIME at or before it (09:00 Shanghai, either side of it, any offset); a future one is refused when sending; a bad one is exit 64")
    func atInstant() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // L = 01-10: due (m = 2) on 01-13, not on 01-12 (m = 1).
        let user = try db.addUser(name: "Due", email: mail.address("due"), checkIns: ["2026-01-10"])
        let env = try NotifierProcess.environment(database: db)
        func dryRun(_ at: String) throws -> (date: String?, listed: [String]) {
            let result = try NotifierProcess.run(["--run-now", "--dry-run", "--at", at, "--format", "json"], environment: env)
            #expect(result.status == 0, "\(at): \(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let users = object?["users"] as? [[String: Any]] ?? []
            return (object?["run_date"] as? String, users.compactMap { $0["user_id"] as? String })
        }
        // 08:59:59 in Shanghai on the 13th: the 13th's notify time has not come, the run date is the 12th.
        #expect(try dryRun("2026-01-13T00:59:59Z") == ("2026-01-12", []))
        #expect(try dryRun("2026-01-13T09:00:00+08:00") == ("2026-01-13", [user]))
        // The same instant written in another offset (Los Angeles' 17:00 on the 12th).
        #expect(try dryRun("2026-01-12T17:00:00-08:00") == ("2026-01-13", [user]))
        #expect(try dryRun("2026-01-13T01:00:00.250Z") == ("2026-01-13", [user]))
        let before = try db.dump()
        let future = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3 * 86_400))
        for arguments in [["--run-now", "--at", future], ["retry", "--at", future]] {
            let result = try NotifierProcess.run(arguments, environment: env)
            #expect(result.status == 64 && result.stderr.contains("--at \(future) is in the future"), "\(arguments): \(result.stderr)")
        }
        for bad in [["--at", "2026-01-13"], ["--at", "2026-01-13T09:00:00"], ["--at", "tomorrow"],
                    ["--at", "2026-01-13T01:00:00Z", "--date", "2026-01-13"]] {
            let result = try NotifierProcess.run(["--run-now", "--dry-run"] + bad, environment: env)
            #expect(result.status == 64, "\(bad): \(result.stderr)")
        }
        #expect(try db.dump() == before, "nothing written")
        // A real run as of a past instant sends for that instant's run date.
        let run = try NotifierProcess.run(["--run-now", "--at", "2026-01-13T01:00:00Z"], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try db.query("SELECT notification_date::text FROM notification_logs WHERE email_sent") == [["2026-01-13"]])
        #expect(try mail.deliveries().count == 1)
    }
}
