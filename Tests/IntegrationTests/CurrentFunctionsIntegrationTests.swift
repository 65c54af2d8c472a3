import Foundation
import Testing

/// `Sources/Store/current-functions.sql`: every function and trigger of the notifier as the
/// migrations leave them, in one file — a trigger's body is otherwise in whichever migration
/// redefined it last. Checked against a freshly migrated database, so the file cannot drift:
/// a migration that changes a function fails here until the file says the same.
@Suite("The current functions and triggers, in one file", .enabled(if: TestEnvironment.enabled))
struct CurrentFunctionsIntegrationTests {
    static let file = TestEnvironment.root.appendingPathComponent("Sources/Store/current-functions.sql")

    @Test("current-functions.sql is what the migrations make (SILEME_WRITE_CURRENT_FUNCTIONS=1 rewrites it)")
    func fileMatchesMigrations() throws {
        let db = try TestDatabase()
        let functions = try db.query("""
            SELECT pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'sileme' ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)
            """).compactMap { $0[0] }
        let triggers = try db.query("""
            SELECT pg_get_triggerdef(t.oid) || ';' FROM pg_trigger t
            WHERE NOT t.tgisinternal AND t.tgname LIKE 'sileme%' ORDER BY t.tgrelid::regclass::text, t.tgname
            """).compactMap { $0[0] }
        #expect(functions.count >= 8 && triggers.count >= 4, "\(functions.count) functions, \(triggers.count) triggers")
        let text = """
            -- The notifier's functions and triggers as the migrations leave them (schema `sileme`, on a
            -- fresh database migrated to the latest version): read here what each one does now; the
            -- migrations in Migrations/ are the history. Generated, and checked by the integration test
            -- CurrentFunctionsIntegrationTests: after a migration that changes one, run
            --   SILEME_WRITE_CURRENT_FUNCTIONS=1 swift test --filter CurrentFunctions
            -- and commit the result. Not run by anything.

            \(functions.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) + ";" }.joined(separator: "\n\n"))

            -- Triggers
            \(triggers.joined(separator: "\n"))

            """
        if ProcessInfo.processInfo.environment["SILEME_WRITE_CURRENT_FUNCTIONS"] == "1" {
            try text.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let stored = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(stored == text, "Sources/Store/current-functions.sql differs from the migrations: rewrite it (see its first lines)")
    }
}
