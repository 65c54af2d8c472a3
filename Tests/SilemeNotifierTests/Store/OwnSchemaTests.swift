import Testing
@testable import Config
@testable import Store

/// The notifier's schema (`DATABASE_SCHEMA`): SQL names its objects `sileme.<name>`, and a
/// connection for another schema rewrites exactly those names.
@Suite struct OwnSchemaTests {
    @Test("the default schema leaves SQL as it is")
    func standardIsUnchanged() {
        let sql = "SELECT * FROM sileme.notifier_runs r JOIN users u ON u.id = r.id"
        #expect(OwnSchema.qualified(sql, into: .standard) == sql)
    }

    @Test("another schema rewrites every qualified name, in statements, casts and literals")
    func otherSchemaRewritesNames() throws {
        let schema = try DatabaseSchema("notifier")
        #expect(OwnSchema.qualified("""
            SELECT count(*) FROM sileme.user_last_check_in s JOIN sileme.known_contacts k USING (user_id);
            SELECT u FROM sileme.sileme_fold_check_ins() AS u, to_regclass('sileme.check_in_queue')
            """, into: schema) == """
            SELECT count(*) FROM notifier.user_last_check_in s JOIN notifier.known_contacts k USING (user_id);
            SELECT u FROM notifier.sileme_fold_check_ins() AS u, to_regclass('notifier.check_in_queue')
            """)
        #expect(OwnSchema.qualified("sileme.notifier_runs", into: schema) == "notifier.notifier_runs")
    }

    @Test("what is not a schema-qualified name stays: host names, longer identifiers, a trailing dot")
    func otherTextStays() throws {
        let schema = try DatabaseSchema("notifier")
        for text in ["'noreply@sileme.app'", "my_sileme.users", "x.sileme.users", "'sileme.'", "sileme.", "sileme.Users",
                     "sileme_notifier.schema", "$sileme.x", "pg_notify('sileme_check_in', 'x')"] {
            #expect(OwnSchema.qualified(text, into: schema) == text, "\(text)")
        }
    }

    @Test("DATABASE_SCHEMA takes a plain lower-case name that is not the app's, PostgreSQL's or Supabase's")
    func validation() throws {
        #expect(try DatabaseSchema("sileme") == .standard)
        #expect(try DatabaseSchema("notifier_2").name == "notifier_2")
        for bad in ["", "public", "auth", "storage", "pg_temp", "Sileme", "9lives", "a b", "a\"b", String(repeating: "x", count: 64)] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try DatabaseSchema(bad) }
        }
    }
}
