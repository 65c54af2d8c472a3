import Foundation
import Testing
@testable import Values
@testable import Store

/// The notifier on a database set up the way Supabase sets one up (issue 22): the roles of the
/// app's REST API (`anon`, the anonymous key inside every copy of the app; `authenticated`, a
/// signed-in user whose `auth.uid()` is the request's JWT subject; `service_role`), Supabase's
/// default privileges that grant every table, sequence and function made in `public` to them, and
/// the design doc's row-level security on the app's tables. Each probe does what the REST API does
/// for a request: `SET ROLE`, the JWT subject in `request.jwt.claim.sub`, the statement.
@Suite("On a database set up as Supabase's", .enabled(if: TestEnvironment.enabled), .serialized)
struct SupabaseIntegrationTests {
    static let date = "2026-01-13"

    /// Supabase's roles (cluster-wide, so created once), its grants and default privileges in this
    /// database, `auth.uid()`, then the app's tables as the app made them, with the design doc's
    /// policies: users read and write their own row, insert and read their own check-ins, and
    /// have no access to notification_logs.
    static func supabase(_ db: TestDatabase) throws {
        for (role, options) in [("anon", "NOLOGIN NOINHERIT"), ("authenticated", "NOLOGIN NOINHERIT"),
                                ("service_role", "NOLOGIN NOINHERIT BYPASSRLS")] {
            try db.connection.executeScript("""
                DO $$ BEGIN CREATE ROLE \(role) \(options); EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$
                """)
        }
        try db.connection.executeScript("""
            GRANT USAGE ON SCHEMA public TO anon, authenticated, service_role;
            ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO anon, authenticated, service_role;
            ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON FUNCTIONS TO anon, authenticated, service_role;
            ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON SEQUENCES TO anon, authenticated, service_role;
            CREATE SCHEMA auth;
            CREATE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE
                AS $$ SELECT nullif(current_setting('request.jwt.claim.sub', true), '')::uuid $$;
            GRANT USAGE ON SCHEMA auth TO anon, authenticated, service_role;
            GRANT EXECUTE ON FUNCTION auth.uid() TO anon, authenticated, service_role;
            """)
        try db.createDesignDocTables()
        try db.connection.executeScript("""
            ALTER TABLE users ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own_user ON users FOR ALL TO authenticated USING (id = auth.uid()) WITH CHECK (id = auth.uid());
            ALTER TABLE check_ins ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own_check_ins_insert ON check_ins FOR INSERT TO authenticated WITH CHECK (user_id = auth.uid());
            CREATE POLICY own_check_ins_select ON check_ins FOR SELECT TO authenticated USING (user_id = auth.uid());
            ALTER TABLE notification_logs ENABLE ROW LEVEL SECURITY;
            """)
    }

    /// One request of the REST API: `statement` as `role` with the JWT subject `subject`, in a
    /// transaction of its own that commits what the statement did. Returns the rows it returned or
    /// changed, or nil when it was refused.
    static func request(_ db: TestDatabase, as role: String, subject: String?, _ statement: String) -> Int? {
        do {
            return try db.connection.transaction {
                try db.connection.execute("SET LOCAL ROLE \(role)")
                try db.connection.execute("SELECT set_config('request.jwt.claim.sub', $1, true)", [subject ?? ""])
                let result = try db.connection.execute(statement)
                return max(result.count, result.affectedRows)
            }
        } catch {
            return nil
        }
    }

    /// Everything the API's roles might try on what the notifier created or writes, aimed at
    /// `victim`: a read, an insert, an update and a delete of every table of the notifier's schema
    /// (each write one the owner could make: `expectClosed` checks that, so that a refusal is the
    /// role's and not a bad statement's), the same names where an older version kept them, the
    /// app's tables the notifier writes or shares, and a call of every function.
    static func probes(victim: String, contact: String, schema: String = "sileme") -> (own: [String], other: [String]) {
        let s = schema
        let own = [
            "SELECT * FROM \(s).user_last_check_in",
            "INSERT INTO \(s).user_last_check_in (user_id, last_check_in_date) VALUES ('\(victim)', '2099-01-01') "
                + "ON CONFLICT (user_id) DO UPDATE SET last_check_in_date = EXCLUDED.last_check_in_date",
            "UPDATE \(s).user_last_check_in SET last_check_in_date = '\(date)' WHERE user_id = '\(victim)'",
            "DELETE FROM \(s).user_last_check_in",
            "SELECT * FROM \(s).check_in_queue",
            "INSERT INTO \(s).check_in_queue (user_id, check_in_date) VALUES ('\(victim)', '\(date)')",
            "UPDATE \(s).check_in_queue SET check_in_date = '2099-01-01'",
            "DELETE FROM \(s).check_in_queue",
            "SELECT * FROM \(s).pending_all_clears",
            "INSERT INTO \(s).pending_all_clears (user_id, streak_after, check_in_date) VALUES ('\(victim)', '2026-01-10', '\(date)') "
                + "ON CONFLICT DO NOTHING",
            "UPDATE \(s).pending_all_clears SET check_in_date = check_in_date",
            "DELETE FROM \(s).pending_all_clears",
            "SELECT * FROM \(s).known_contacts",
            "INSERT INTO \(s).known_contacts (user_id, contact) VALUES ('\(victim)', 'attacker@example.com')",
            "UPDATE \(s).known_contacts SET state = 'introduced'",
            "DELETE FROM \(s).known_contacts",
            "SELECT * FROM \(s).notifier_runs",
            "INSERT INTO \(s).notifier_runs (run_date, mode, host, pid) VALUES ('\(date)', 'daemon', 'anon', 1)",
            "UPDATE \(s).notifier_runs SET status = 'completed'",
            "DELETE FROM \(s).notifier_runs",
            "SELECT * FROM \(s).notifier_run_lock",
            "INSERT INTO \(s).notifier_run_lock (id, holder, expires_at) VALUES (1, 'anon', '2099-01-01') ON CONFLICT DO NOTHING",
            "UPDATE \(s).notifier_run_lock SET expires_at = '2099-01-01'",
            "DELETE FROM \(s).notifier_run_lock",
            "SELECT * FROM \(s).sileme_schema_migrations",
            "INSERT INTO \(s).sileme_schema_migrations (version, name) VALUES (999, 'anon')",
            "UPDATE \(s).sileme_schema_migrations SET name = name",
            "DELETE FROM \(s).sileme_schema_migrations",
            // A forged "I'm on it" would stop the streak's follow-up (docs/acknowledgement.md).
            "SELECT * FROM \(s).acknowledgements",
            "INSERT INTO \(s).acknowledgements (user_id, alert_date, contact, last_check_in_date) VALUES ('\(victim)', '\(date)', 'x@example.com', '\(date)')",
            "DELETE FROM \(s).acknowledgements",
            "TRUNCATE \(s).acknowledgements",
            // A frozen count of changes would keep the daemon on the users' old times (for an hour).
            "SELECT * FROM \(s).user_times_changes",
            "UPDATE \(s).user_times_changes SET changes = 0",
            "DELETE FROM \(s).user_times_changes",
            // A forged bounce event would count a live address as dead in the history report.
            "SELECT * FROM \(s).bounce_events",
            "INSERT INTO \(s).bounce_events (report, kind) VALUES ('forged', 'permanent')",
            "DELETE FROM \(s).bounce_events",
            // A forged reader's record would tell `check` the mailbox was read when it was not.
            "SELECT * FROM \(s).bounce_mailbox",
            "INSERT INTO \(s).bounce_mailbox (reports) VALUES (1)",
            "UPDATE \(s).bounce_mailbox SET read_at = now()",
            // A forged stage or outcome would silence a streak's escalation, or close it.
            "SELECT * FROM \(s).escalations",
            "INSERT INTO \(s).escalations (user_id, alert_date, last_check_in_date, first_sent_at, clock_at) "
                + "VALUES ('\(victim)', '2000-01-04', '2000-01-01', now(), now())",
            "UPDATE \(s).escalations SET stage = 'closed'",
            "DELETE FROM \(s).escalations",
            // A forged tally would hide escalations from the metrics.
            "SELECT * FROM \(s).escalation_tally",
            "UPDATE \(s).escalation_tally SET escalated = 0",
            "DELETE FROM \(s).escalation_tally",
        ] + OwnSchema.tables.map { "TRUNCATE \(s).\($0) CASCADE" }
        var other = OwnSchema.tables.flatMap { ["SELECT * FROM public.\($0)", "DELETE FROM public.\($0)"] }
        other += [
            // The app's tables the notifier writes or created: another user's rows are out of reach.
            "SELECT * FROM emergency_contacts WHERE user_id = '\(victim)'",
            "UPDATE emergency_contacts SET email = 'attacker@example.com' WHERE user_id = '\(victim)'",
            "DELETE FROM emergency_contacts WHERE user_id = '\(victim)'",
            "INSERT INTO emergency_contacts (user_id, email) VALUES ('\(victim)', 'attacker@example.com')",
            "SELECT * FROM contact_status WHERE user_id = '\(victim)'",
            "UPDATE contact_status SET status = 'undeliverable' WHERE user_id = '\(victim)'",
            "DELETE FROM contact_status", "INSERT INTO contact_status (user_id, email, status) VALUES ('\(victim)', '\(contact)', 'ok')",
            "SELECT * FROM notification_logs", "DELETE FROM notification_logs",
            "UPDATE notification_logs SET email_sent = false",
            "INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days) VALUES ('\(victim)', '\(date)', true, 2)",
            "SELECT * FROM users WHERE id = '\(victim)'", "SELECT * FROM check_ins WHERE user_id = '\(victim)'",
            "INSERT INTO check_ins (user_id, check_in_date) VALUES ('\(victim)', '\(date)')",
        ]
        for function in OwnSchema.functions + ["sileme_track_slot", "sileme_count_user_times_change", "sileme_watch_alert",
                                                         "sileme_count_escalation_step"] {
            other += ["SELECT \(s).\(function)()", "SELECT public.\(function)()"]
        }
        other += ["SELECT \(s).sileme_grant_like('\(s).notifier_runs', '\(s).notifier_runs', 'INSERT', 'ALL')"]
        return (own, other)
    }

    /// Runs every probe as `anon` and as the signed-in `other` user; each must be refused or reach
    /// no row, and the database must be byte for byte what it was.
    static func expectClosed(_ db: TestDatabase, victim: String, other: String, contact: String, schema: String = "sileme") throws {
        let (own, others) = probes(victim: victim, contact: contact, schema: schema)
        for statement in own {
            // The owner could: the statement is sound, so a refusal below is the role's.
            var sound = false
            do {
                try db.connection.transaction {
                    try db.connection.execute(statement)
                    throw Rollback()
                }
            } catch is Rollback { sound = true } catch {}
            #expect(sound, "the owner can run: \(statement)")
        }
        let before = try db.dump()
        for (role, subject) in [("anon", nil), ("authenticated", other)] as [(String, String?)] {
            for statement in own + others {
                let reached = request(db, as: role, subject: subject, statement)
                #expect(reached == nil || reached == 0, "\(role): \(statement) reached \(reached ?? 0) row(s)")
            }
        }
        // A refused insert still draws its id from the table's sequence: the sequences' positions
        // are not data, and are left out of the comparison.
        func rows(_ dump: String) -> [Substring] { dump.split(separator: "\n").filter { !$0.contains("pg_catalog.setval(") } }
        let after = try db.dump()
        #expect(rows(after) == rows(before),
                "the API's roles changed nothing: \(Set(rows(after)).symmetricDifference(Set(rows(before))).sorted())")
    }

    /// Ends a transaction of `expectClosed`'s soundness check without committing it.
    struct Rollback: Error {}

    @Test("migrated on Supabase: anon and another signed-in user cannot read, write or call anything the notifier keeps; check says so, and names what a later grant opens")
    func closedToTheAPI() throws {
        let db = try TestDatabase(migrate: false)
        let mail = try Mailbox()
        try Self.supabase(db)
        var env = try NotifierProcess.environment(database: db)
        #expect(try NotifierProcess.run(["migrate"], environment: env).status == 0)
        let victim = try db.addUser(name: "独居者", email: mail.address("fallback"), checkIns: ["2026-01-10"])
        let other = try db.addUser(name: "Other", email: mail.address("other"), checkIns: ["2026-01-12"])
        let contact = mail.address("daughter")
        try db.query("INSERT INTO emergency_contacts (user_id, email) VALUES ($1, $2), ($3, $4)",
                     [victim, contact, other, mail.address("other.contact")])
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env).status == 0)
        #expect(try mail.deliveries().map(\.recipient).contains(contact), "the run alerted the victim's contact")
        #expect(try db.query("SELECT count(*)::text FROM contact_status WHERE user_id = $1", [victim]) == [["1"]])
        // A check-in waiting in the queue, for the probes to find (or not).
        try db.checkIn(other, Self.date)

        // A signed-in user still reaches their own rows through the owner policies.
        #expect(Self.request(db, as: "authenticated", subject: other, "SELECT * FROM emergency_contacts") == 1)
        #expect(Self.request(db, as: "authenticated", subject: other,
                             "UPDATE emergency_contacts SET position = 2 WHERE user_id = '\(other)'") == 1)
        try Self.expectClosed(db, victim: victim, other: other, contact: contact)

        env["FROM_EMAIL"] = "noreply@sileme.app"
        let check = try NotifierProcess.run(["check"], environment: env)
        #expect(check.stderr.contains("ok   exposure: nothing in schema sileme is open to another role"), "\(check.stderr)")
        // Reopened by hand: check names each table and role with the statement that closes it.
        try db.connection.executeScript("""
            GRANT USAGE ON SCHEMA sileme TO anon;
            GRANT SELECT, UPDATE ON sileme.user_last_check_in TO anon;
            GRANT EXECUTE ON FUNCTION sileme.sileme_fold_check_ins() TO PUBLIC;
            ALTER TABLE notification_logs DISABLE ROW LEVEL SECURITY;
            """)
        let warned = try NotifierProcess.run(["check"], environment: env)
        #expect(warned.status == check.status, "a warning does not change the exit status")
        for line in [
            "warn exposed: role anon may SELECT, UPDATE sileme.user_last_check_in: REVOKE ALL ON sileme.user_last_check_in FROM anon;",
            // Granted to PUBLIC, reached by anon, the one role that may use the schema.
            "warn exposed: role anon may EXECUTE sileme.sileme_fold_check_ins(): REVOKE ALL ON FUNCTION sileme.sileme_fold_check_ins() FROM anon;",
            "warn exposed: role anon may SELECT, INSERT, UPDATE, DELETE, TRUNCATE public.notification_logs, which has no row-level security: ALTER TABLE public.notification_logs ENABLE ROW LEVEL SECURITY;",
        ] {
            #expect(warned.stderr.contains(line), "\(line)\n\(warned.stderr)")
        }
        #expect(!warned.stderr.contains("exposed: role service_role"), "service_role bypasses row security: the API's admin key")
    }

    @Test("an installation of the old layout on Supabase, migrated forward: the tables move with their rows, migrate says so, the least-privilege role keeps working, and the API is shut out")
    func oldLayoutMigratedForward() throws {
        let db = try TestDatabase(migrate: false)
        let mail = try Mailbox()
        try Self.supabase(db)
        // The layout before 013: everything in public, granted to the API's roles by default.
        let old = FileManager.default.temporaryDirectory.appendingPathComponent("sileme-old-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: old) }
        for file in try FileManager.default.contentsOfDirectory(atPath: TestDatabase.migrationsDirectory) where file < "013" {
            try FileManager.default.copyItem(atPath: TestDatabase.migrationsDirectory + "/" + file, toPath: old.appendingPathComponent(file).path)
        }
        try db.connection.executeScript("""
            CREATE TABLE sileme_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now());
            """)
        try Migrator(directory: old.path).migrate(db.connection)
        try db.connection.executeScript("DROP SCHEMA sileme")  // empty: an older version never made it
        #expect(try db.query("SELECT to_regclass('public.user_last_check_in') IS NOT NULL, to_regnamespace('sileme') IS NULL") == [["t", "t"]])
        // The least-privilege role as the old config/least-privilege.sql made it (the same grants,
        // unqualified; not those of the tables later migrations add, which 016 grants to it).
        let role = "sileme_notifier_\(db.name.suffix(8))"
        let current = try String(contentsOf: TestEnvironment.root.appendingPathComponent("config/least-privilege.sql"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("daily_intake") && !$0.contains("held_alerts") && !$0.contains("user_times_changes") && !$0.contains("bounce_events")
                && !$0.contains("bounce_mailbox") && !$0.contains("escalation") && !$0.contains("relay_counts") && !$0.contains("canaries") }
            .joined(separator: "\n")
        try db.connection.executeScript(current.replacingOccurrences(of: "GRANT USAGE ON SCHEMA sileme TO sileme_notifier;", with: "")
            // The old layout had no acknowledgements (017 makes them, and grants them to this role).
            .replacingOccurrences(of: "GRANT SELECT, INSERT ON sileme.acknowledgements TO sileme_notifier;", with: "")
            .replacingOccurrences(of: "ARRAY['notification_logs', 'contact_status']", with: "ARRAY['notification_logs']")
            .replacingOccurrences(of: "sileme.", with: "").replacingOccurrences(of: "sileme_notifier", with: role))
        defer { _ = try? db.connection.executeScript("REASSIGN OWNED BY \(role) TO postgres; DROP OWNED BY \(role); DROP ROLE \(role)") }
        let victim = try db.addUser(name: "独居者", email: mail.address("victim"), checkIns: ["2026-01-09", "2026-01-10"])
        let other = try db.addUser(name: "Other", email: mail.address("other"), checkIns: ["2026-01-12"])
        try db.query("SELECT count(*) FROM sileme_fold_check_ins()")  // the old layout's fold, in public
        try db.query("UPDATE known_contacts SET state = 'introduced'")  // introduced long ago
        try db.query("INSERT INTO notifier_runs (run_date, mode, host, pid, status) VALUES ('2026-01-12', 'daemon', 'old', 1, 'completed')")
        // The hole the move closes: anon reads and moves the summary.
        #expect(Self.request(db, as: "anon", subject: nil, "SELECT * FROM public.user_last_check_in") == 2)
        let tables = ["user_last_check_in", "known_contacts", "notifier_runs", "sileme_schema_migrations"]
        let rows = try tables.map { try db.query("SELECT * FROM public.\($0) ORDER BY 1") }

        let env = try NotifierProcess.environment(database: db)
        let migrated = try NotifierProcess.run(["migrate"], environment: env)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stderr.contains("applied: 013_own_schema.sql"), "\(migrated.stderr)")
        #expect(migrated.stderr.contains("moved into schema sileme with their rows and grants (out of the app's schema): "
            + "sileme.user_last_check_in, sileme.check_in_queue, sileme.pending_all_clears, sileme.known_contacts, sileme.notifier_runs, "
            + "sileme.notifier_run_lock, sileme.sileme_schema_migrations, "
            + OwnSchema.functions.map { "sileme.\($0)()" }.joined(separator: ", ")), "\(migrated.stderr)")
        let added = try db.query("SELECT count(*)::int FROM sileme.sileme_schema_migrations WHERE version >= 13")[0][0].flatMap { Int($0) } ?? 0
        #expect(added >= 1, "013 and every later migration recorded")
        for (table, before) in zip(tables, rows) {
            // Later migrations may add columns (at the end): the rows keep the columns they had.
            let after = try db.query("SELECT * FROM sileme.\(table) ORDER BY 1").map { Array($0.prefix(before.first?.count ?? 0)) }
            #expect(after.count == before.count + (table == "sileme_schema_migrations" ? added : 0), "\(table) keeps its rows")
            #expect(Array(after.prefix(before.count)) == before, "\(table) keeps its rows")
        }
        #expect(try db.query("SELECT count(*)::text FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relname = ANY($1)",
                             [PGArray.literal(OwnSchema.tables)]) == [["0"]], "nothing of the notifier's is left in public")
        #expect(try NotifierProcess.run(["migrate"], environment: env).stderr.contains("schema is current"))

        // The least-privilege role runs and checks as before.
        let env2 = try NotifierProcess.environment(database: db, ["DATABASE_URL": "postgresql://\(role)@127.0.0.1:\(try TestEnvironment.require().pgPort)/\(db.name)"])
        let run = try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env2)
        #expect(run.status == 0, "\(run.stderr)")
        // What the daemon's look reads (019 granted it to the role, which reads the summary).
        #expect(Self.request(db, as: role, subject: nil, "SELECT changes FROM sileme.user_times_changes") == 1)
        #expect(try db.logs(victim).map(\.emailSent) == [true])
        #expect(try mail.deliveries().map(\.recipient) == [mail.address("victim")])
        var checkEnv = env2
        checkEnv["FROM_EMAIL"] = "noreply@sileme.app"
        let check = try NotifierProcess.run(["check"], environment: checkEnv)
        #expect(!check.stderr.contains("exposed:"), "\(check.stderr)")
        #expect(check.stderr.contains("ok   row security"), "\(check.stderr)")
        try Self.expectClosed(db, victim: victim, other: other, contact: mail.address("victim"))
    }

    @Test("DATABASE_SCHEMA names another schema: migrate, a run, the dry run and check use it, and nothing is made in sileme")
    func anotherSchema() throws {
        let db = try TestDatabase(migrate: false)
        let mail = try Mailbox()
        try Self.supabase(db)
        var env = try NotifierProcess.environment(database: db, ["DATABASE_SCHEMA": "notifier_state"])
        #expect(try NotifierProcess.run(["migrate"], environment: env).status == 0)
        #expect(try db.query("SELECT to_regnamespace('sileme') IS NULL, count(*)::text FROM pg_class WHERE relnamespace = 'notifier_state'::regnamespace AND relkind = 'r'")
                == [["t", String(OwnSchema.tables.count + 10)]],
                "013's tables, 016's intake and holds, 017's acknowledgements, 019's count, 022's bounce events, 023's reader record, 024's escalations, 027's tally, 033's relay counts, 034's canaries")
        let victim = try db.addUser(name: "独居者", email: mail.address("state"), checkIns: ["2026-01-10"])
        let other = try db.addUser(name: "Other", email: mail.address("other"), checkIns: ["2026-01-12"])
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--date", Self.date, "--format", "json"], environment: env)
        #expect(dry.status == 0 && dry.stdout.contains(victim), "\(dry.stderr)")
        #expect(try NotifierProcess.run(["--run-now", "--date", Self.date], environment: env).status == 0)
        #expect(try mail.deliveries().map(\.recipient) == [mail.address("state")])
        #expect(try db.query("SELECT count(*)::text FROM notifier_state.notifier_runs WHERE status = 'completed'") == [["1"]])
        env["FROM_EMAIL"] = "noreply@sileme.app"
        #expect(try NotifierProcess.run(["check"], environment: env).stderr.contains("ok   exposure: nothing in schema notifier_state"))
        try Self.expectClosed(db, victim: victim, other: other, contact: mail.address("state"), schema: "notifier_state")
    }
}
