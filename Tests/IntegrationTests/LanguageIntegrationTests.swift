import Foundation
import Testing

/// Each contact's language on the real servers (docs/languages.md): what `check` says of the
/// languages and their fallbacks, and a default with no templates refused at start.
@Suite("Languages", .enabled(if: TestEnvironment.enabled))
struct LanguageIntegrationTests {
    /// A TEMPLATE_DIR with the shipped languages copied and a Russian folder holding the alert only.
    static func templates() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sn-lang-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: TestEnvironment.root.appendingPathComponent("config/templates"), to: root)
        let russian = root.appendingPathComponent("ru")
        try FileManager.default.createDirectory(at: russian, withIntermediateDirectories: true)
        try "[{{app_name}}] {{user_name}} не отмечается\n".write(to: russian.appendingPathComponent("subject.mustache"), atomically: true, encoding: .utf8)
        try "{{user_name}} не отмечается {{miss_days_text}}.\n".write(to: russian.appendingPathComponent("body.txt.mustache"), atomically: true, encoding: .utf8)
        return root
    }

    @Test("check lists each language, where its templates come from, the default, and what falls back")
    func checkListsLanguages() throws {
        let db = try TestDatabase()
        let folder = try Self.templates()
        defer { try? FileManager.default.removeItem(at: folder) }
        let env = try NotifierProcess.environment(database: db, ["TEMPLATE_DIR": folder.path])
        let check = try NotifierProcess.run(["check"], environment: env)
        let output = check.stdout + check.stderr
        #expect(check.status == 0, "\(output)")
        #expect(output.contains("ok   languages: en from TEMPLATE_DIR, ru from TEMPLATE_DIR, zh-Hans (default) from TEMPLATE_DIR, "
                                + "zh-Hant from TEMPLATE_DIR; falls back: ru all_clear → zh-Hans, ru follow_up → zh-Hans"), "\(output)")
        let builtIn = try NotifierProcess.run(["check"], environment: NotifierProcess.environment(database: db, ["DEFAULT_LANGUAGE": "en"]))
        #expect((builtIn.stdout + builtIn.stderr).contains("ok   languages: en (default), zh-Hans, zh-Hant\n"), "\(builtIn.stdout)")
    }

    @Test("DEFAULT_LANGUAGE with no templates, or not a language: refused at start with exit 78, naming it")
    func defaultWithoutTemplates() throws {
        let db = try TestDatabase()
        for (value, words) in [("fr", "no templates in fr"), ("klingon!", "is not a language tag")] {
            let env = try NotifierProcess.environment(database: db, ["DEFAULT_LANGUAGE": value])
            let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
            #expect(run.status == 78 && run.stderr.contains("DEFAULT_LANGUAGE") && run.stderr.contains(words), "\(run.stderr)")
        }
    }

    @Test("migrate adds the language of users and contacts, nullable, for the app to write")
    func columns() throws {
        let db = try TestDatabase()
        let columns = try db.query("""
            SELECT table_name::text, is_nullable::text, data_type::text FROM information_schema.columns
            WHERE table_schema = 'public' AND column_name = 'language' ORDER BY table_name
            """)
        #expect(columns == [["emergency_contacts", "YES", "text"], ["users", "YES", "text"]])
    }
}
