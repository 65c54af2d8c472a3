import Foundation
import Testing
@testable import Values
@testable import Store

/// `config/least-privilege.sql`: the notifier works as a role that reads users and check_ins and
/// writes only notification_logs and notifier_runs (issue 6).
@Suite("Least-privilege role on real PostgreSQL", .enabled(if: TestEnvironment.enabled))
struct LeastPrivilegeIntegrationTests {
    @Test("a migration's one line grants a new table and its sequence as the others are: the notifier's role gets what it is given, PUBLIC nothing")
    func grantLike() throws {
        let db = try TestDatabase()
        let role = "sileme_notifier_\(db.name.suffix(8))"
        let sql = try String(contentsOf: TestEnvironment.root.appendingPathComponent("config/least-privilege.sql"), encoding: .utf8)
        try db.connection.executeScript(sql.replacingOccurrences(of: "sileme_notifier", with: role))
        defer { _ = try? db.connection.executeScript("REASSIGN OWNED BY \(role) TO postgres; DROP OWNED BY \(role); DROP ROLE \(role)") }
        try db.query("CREATE TABLE sileme.grant_probe (id bigserial PRIMARY KEY, v text)")
        try db.query("GRANT SELECT ON sileme.grant_probe TO PUBLIC")
        #expect(try db.query("SELECT sileme.sileme_grant_like('sileme.grant_probe', 'sileme.notifier_runs', 'INSERT', 'SELECT, INSERT')::text")
                == [["1"]], "the one role least-privilege.sql made")
        #expect(try db.query("SELECT sileme.sileme_grant_like('sileme.grant_probe_id_seq', 'sileme.notifier_runs', 'INSERT', 'USAGE')::text")
                == [["1"]])
        func can(_ who: String, _ privilege: String) throws -> Bool {
            try db.query("SELECT has_table_privilege($1, 'sileme.grant_probe', $2)::text", [who, privilege]) == [["true"]]
        }
        #expect(try can(role, "SELECT") && can(role, "INSERT") && !can(role, "DELETE") && !can(role, "UPDATE"))
        #expect(try db.query("SELECT has_sequence_privilege($1, 'sileme.grant_probe_id_seq', 'USAGE')::text", [role]) == [["true"]])
        #expect(try db.query("""
            SELECT count(*)::text FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
            WHERE c.oid IN ('sileme.grant_probe'::regclass, 'sileme.grant_probe_id_seq'::regclass) AND a.grantee = 0
            """) == [["0"]], "PUBLIC's grant revoked")
        // The role itself cannot call it: granting is the owner's, in a migration.
        let restricted = try PGConnection(Secret("postgresql://\(role)@127.0.0.1:\(try TestEnvironment.require().pgPort)/\(db.name)"),
                                          schema: .standard)
        #expect(throws: DatabaseError.self) {
            try restricted.execute("SELECT sileme.sileme_grant_like('sileme.grant_probe', 'sileme.notifier_runs', 'INSERT', 'ALL')")
        }
    }

    @Test("runs, dry runs, retries and reports work as the restricted role, which cannot touch the app's data")
    func restrictedRole() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // Roles are cluster-wide: give this test's role a name of its own.
        let role = "sileme_notifier_\(db.name.suffix(8))"
        let sql = try String(contentsOf: TestEnvironment.root.appendingPathComponent("config/least-privilege.sql"), encoding: .utf8)
        try db.connection.executeScript(sql.replacingOccurrences(of: "sileme_notifier", with: role))
        defer { _ = try? db.connection.executeScript("REASSIGN OWNED BY \(role) TO postgres; DROP OWNED BY \(role); DROP ROLE \(role)") }
        let user = try db.addUser(name: "受限", email: mail.address("restricted"), checkIns: ["2026-01-10"])
        let bad = try db.addUser(name: "Bad", email: "not-an-address", checkIns: ["2026-01-10"])
        let env = try TestEnvironment.require()
        let url = "postgresql://\(role)@127.0.0.1:\(env.pgPort)/\(db.name)"
        let run = try NotifierProcess.environment(database: db, ["DATABASE_URL": url])
        #expect(try NotifierProcess.run(["check"], environment: run).status == 0)
        #expect(try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"], environment: run).status == 0)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: run).status == 0)
        #expect(try db.logs(user).map(\.emailSent) == [true])
        #expect(try db.logs(bad).map(\.status) == ["skipped"])
        #expect(try NotifierProcess.run(["retry", "--date", "2026-01-13", "--dry-run"], environment: run).status == 0)
        #expect(try NotifierProcess.run(["report", "--from", "2026-01-10", "--to", "2026-01-13", "--format", "json"], environment: run).status == 0)
        // The role cannot change the app's data or the schema.
        let restricted = try PGConnection(Secret(url), schema: .standard)
        for statement in ["UPDATE users SET name = 'x'", "DELETE FROM check_ins", "DELETE FROM notification_logs",
                          "INSERT INTO check_ins (user_id, check_in_date) VALUES ('\(user)', '2026-01-13')",
                          "UPDATE sileme.user_last_check_in SET last_check_in_date = '2026-01-13'", "DELETE FROM sileme.check_in_queue",
                          "INSERT INTO sileme.check_in_queue (user_id, check_in_date) VALUES ('\(user)', '2026-01-13')",
                          "CREATE TABLE x (i int)"] {
            #expect(throws: DatabaseError.self, "\(statement)") { try restricted.execute(statement) }
        }
        #expect(try NotifierProcess.run(["migrate"], environment: run).status != 0, "migrations need the owner")
    }
}
