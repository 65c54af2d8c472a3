import Config
import Foundation

/// Applies the versioned SQL files of `Migrations/` (`NNN_name.sql`) in order, each once, each in
/// its own transaction, recording them in `sileme_schema_migrations`. Safe to run any number of
/// times and from several processes at once (an advisory lock serialises them).
public struct Migrator: Sendable {
    /// One migration file.
    public struct Migration: Sendable, Equatable {
        /// The number before the first `_`.
        public let version: Int
        /// The file name.
        public let name: String
        /// The SQL text.
        public let sql: String
    }

    /// The folder holding the `.sql` files.
    public let directory: String

    /// Uses `directory`, or finds the shipped migrations when nil (see `defaultDirectory()`).
    public init(directory: String?) throws(ConfigurationError) {
        guard let found = directory ?? Self.defaultDirectory() else {
            throw ConfigurationError(
                setting: "MIGRATIONS_DIR",
                reason: "no migrations found beside the executable or in /usr/share/sileme-notifier/migrations; set MIGRATIONS_DIR")
        }
        self.directory = found
    }

    /// Where the migrations are installed: the SwiftPM resource bundle beside the executable, then
    /// `/usr/local/share/sileme-notifier/migrations`, then `/usr/share/sileme-notifier/migrations`.
    public static func defaultDirectory() -> String? {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let dir = (exe as NSString).deletingLastPathComponent
            candidates.append("\(dir)/sileme-notifier_Store.resources/Migrations")
            candidates.append("\(dir)/../share/sileme-notifier/migrations")
        }
        candidates += ["/usr/local/share/sileme-notifier/migrations", "/usr/share/sileme-notifier/migrations"]
        return candidates.first { FileManager.default.fileExists(atPath: "\($0)/001_app_tables.sql") }
    }

    /// The migrations in the folder, sorted by version.
    public func migrations() throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }
        return try names.compactMap { name -> Migration? in
            guard let version = Int(name.prefix { $0.isNumber }) else { return nil }
            let sql = try String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)
            return Migration(version: version, name: name, sql: sql)
        }.sorted { $0.version < $1.version }
    }

    /// Applies what is missing; returns the names of the migrations applied now. Each migration
    /// runs in its own transaction under a transaction-scoped advisory lock, and asks again in it
    /// whether it is applied, so concurrent `migrate`s apply each once — through a transaction
    /// pooler too, where a session-level lock would stay behind in a pooled server connection.
    @discardableResult
    public func migrate(_ db: PGConnection) throws -> [String] {
        let all = try migrations()
        let lock = "SELECT pg_advisory_xact_lock(7345120001)"
        try db.transaction {
            try db.execute(lock)
            try db.execute("""
                CREATE TABLE IF NOT EXISTS sileme_schema_migrations (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                """)
        }
        var done: [String] = []
        for migration in all {
            let applied: Bool = try db.transaction {
                try db.execute(lock)
                guard try db.execute("SELECT 1 FROM sileme_schema_migrations WHERE version = $1",
                                     [String(migration.version)]).count == 0 else { return false }
                try db.executeScript(migration.sql)
                try db.execute("INSERT INTO sileme_schema_migrations (version, name) VALUES ($1, $2)",
                               [String(migration.version), migration.name])
                return true
            }
            if applied { done.append(migration.name) }
        }
        return done
    }

    /// The versions not yet applied to `db` (empty when the schema is current).
    public func pending(_ db: PGConnection) throws -> [String] {
        let exists = try db.execute("SELECT to_regclass('sileme_schema_migrations') IS NOT NULL")[0].bool(0)
        let applied = exists
            ? Set(try db.execute("SELECT version FROM sileme_schema_migrations").rows.compactMap { $0.int(0) })
            : []
        return try migrations().filter { !applied.contains($0.version) }.map(\.name)
    }
}
