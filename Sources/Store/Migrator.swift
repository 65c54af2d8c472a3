import Config
import Foundation

/// Applies the versioned SQL files of `Migrations/` (`NNN_name.sql`) in order, each once, each in
/// its own transaction, recording them in `sileme.sileme_schema_migrations`. Safe to run any number of
/// times and from several processes at once (an advisory lock serialises them).
package struct Migrator: Sendable {
    /// One migration file.
    package struct Migration: Sendable, Equatable {
        /// The number before the first `_`.
        package let version: Int
        /// The file name.
        package let name: String
        /// The SQL text.
        package let sql: String
    }

    /// The folder holding the `.sql` files.
    package let directory: String

    /// Uses `directory`, or finds the shipped migrations when nil (see `defaultDirectory()`).
    package init(directory: String?) throws(ConfigurationError) {
        guard let found = directory ?? Self.defaultDirectory() else {
            throw ConfigurationError(
                setting: "MIGRATIONS_DIR",
                reason: "no migrations found beside the executable or in /usr/share/sileme-notifier/migrations; set MIGRATIONS_DIR")
        }
        self.directory = found
    }

    /// Where the migrations are installed: the SwiftPM resource bundle beside the executable, then
    /// `/usr/local/share/sileme-notifier/migrations`, then `/usr/share/sileme-notifier/migrations`.
    package static func defaultDirectory() -> String? {
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
    package func migrations() throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }
        return try names.compactMap { name -> Migration? in
            guard let version = Int(name.prefix { $0.isNumber }) else { return nil }
            let sql = try String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)
            return Migration(version: version, name: name, sql: sql)
        }.sorted { $0.version < $1.version }
    }

    /// What `migrate` did.
    package struct Outcome: Sendable, Equatable {
        /// The migrations applied now, by file name.
        package var applied: [String] = []
        /// The notifier's objects found in the app's schema (an older version's layout) and now in
        /// its own: `schema.name` for each.
        package var moved: [String] = []
        /// The notifier's triggers (re)installed on `check_ins` because one was missing — the app
        /// replaced the table (partitioned it) since the last `migrate` — with the summary rebuilt
        /// from the table; empty when they were all there (the usual case).
        package var reinstalledTriggers: [String] = []
    }

    /// Applies what is missing. Each migration runs in its own transaction under a
    /// transaction-scoped advisory lock, and asks again in it whether it is applied, so concurrent
    /// `migrate`s apply each once — through a transaction pooler too, where a session-level lock
    /// would stay behind in a pooled server connection. The migrations learn the notifier's schema
    /// from the setting `sileme_notifier.schema`, local to their transaction.
    ///
    /// The migration record lives in the notifier's schema; a fresh installation creates it there
    /// first, while an older one keeps its record in the app's schema until migration 013 moves it
    /// with everything else.
    @discardableResult
    package func migrate(_ db: PGConnection) throws -> Outcome {
        let all = try migrations()
        let lock = "SELECT pg_advisory_xact_lock(7345120001)"
        let schema = db.schema.name
        try db.transaction {
            try Self.takeLock(db, lock)
            // Also where it exists: PostgreSQL asks for the right to create schemas first, so that
            // `migrate` is the owner's, even with nothing left to apply.
            try db.execute("CREATE SCHEMA IF NOT EXISTS \(schema)")
            guard try Self.record(db) == nil else { return }
            try db.execute("REVOKE ALL ON SCHEMA \(schema) FROM PUBLIC")
            try db.execute("""
                CREATE TABLE sileme.sileme_schema_migrations (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                """)
        }
        let outside = try Self.outsideObjects(db)
        var outcome = Outcome()
        for migration in all {
            let applied: Bool = try db.transaction {
                try Self.takeLock(db, lock)
                guard let record = try Self.record(db),
                      try db.execute(SQLStatement("SELECT 1 FROM \(record) WHERE version = $version"),
                                     ["version": String(migration.version)]).count == 0
                else { return false }
                try db.execute(SQLStatement("SELECT set_config('sileme_notifier.schema', $schema, true)"), ["schema": schema])
                try db.executeScript(migration.sql)
                // Where the record is now (013 moves an older installation's).
                guard let now = try Self.record(db) else { return false }
                try db.execute(SQLStatement("INSERT INTO \(now) (version, name) VALUES ($version, $name)"),
                               ["version": String(migration.version), "name": migration.name])
                return true
            }
            if applied { outcome.applied.append(migration.name) }
        }
        outcome.reinstalledTriggers = try installCheckInTriggers(db, lock: lock)
        if !outside.isEmpty {
            let left = Set(try Self.outsideObjects(db))
            outcome.moved = outside.filter { !left.contains($0) }.map { "\(schema).\($0)" }
        }
        return outcome
    }

    /// Takes the migration lock (`lock`, a transaction-scoped advisory lock), waiting for it at
    /// most the session's `lock_timeout` (`PGConnection.lockWaitSeconds`): past it, the error
    /// names the lock — another `migrate` is applying migrations — and this one may be run again.
    private static func takeLock(_ db: PGConnection, _ lock: String) throws {
        do {
            try db.withBoundedLocks { try db.execute(lock) }
        } catch let error as DatabaseError where error.lockWait {
            throw DatabaseError(kind: error.kind, sqlState: error.sqlState,
                                message: "the migration lock (another `sileme-notifier migrate` is applying migrations): " + error.message,
                                lockWait: true)
        }
    }

    /// Every `migrate`, after the migrations: the triggers on whatever table `check_ins` is now
    /// (migration 021's function; it changes nothing, and locks nothing, when they are all there),
    /// so that `migrate` is the remedy for an app that replaced the table. Skipped where the
    /// migrations at hand stop before 021.
    private func installCheckInTriggers(_ db: PGConnection, lock: String) throws -> [String] {
        try db.transaction {
            try Self.takeLock(db, lock)
            guard try db.execute("""
                SELECT to_regprocedure('sileme.sileme_install_check_in_triggers()') IS NOT NULL AS installed
                """)[0].bool("installed") else { return [] }
            let installed = try db.execute("""
                SELECT array_to_string(sileme.sileme_install_check_in_triggers(), ',') AS triggers
                """)[0].string("triggers") ?? ""
            return installed.split(separator: ",").map(String.init)
        }
    }

    /// The migration record: in the notifier's schema, else (an older installation) where the
    /// search path finds it; nil before the first `migrate`.
    static func record(_ db: PGConnection) throws -> String? {
        try db.execute("""
            SELECT coalesce(to_regclass('sileme.sileme_schema_migrations')::text, to_regclass('sileme_schema_migrations')::text) AS record
            """)[0].string("record")
    }

    /// The notifier's tables and functions that live elsewhere than its schema: where the search
    /// path finds them (an older version created them in the app's schema).
    static func outsideObjects(_ db: PGConnection) throws -> [String] {
        try db.execute(SQLStatement("""
            SELECT t AS object FROM unnest($tables::text[]) t
            WHERE to_regclass(quote_ident(t)) IS NOT NULL
              AND to_regclass(quote_ident(t)) IS DISTINCT FROM to_regclass($schema || '.' || quote_ident(t))
            UNION ALL
            SELECT f || '()' FROM unnest($functions::text[]) f
            WHERE to_regprocedure(quote_ident(f) || '()') IS NOT NULL
              AND to_regprocedure(quote_ident(f) || '()') IS DISTINCT FROM to_regprocedure($schema || '.' || quote_ident(f) || '()')
            """), ["tables": PGArray.literal(OwnSchema.tables), "functions": PGArray.literal(OwnSchema.functions),
                   "schema": db.schema.name]).rows.compactMap { $0.string("object") }
    }

    /// The versions not yet applied to `db` (empty when the schema is current).
    package func pending(_ db: PGConnection) throws -> [String] {
        let applied = try Self.record(db).map { record in
            Set(try db.execute("SELECT version FROM \(record)").rows.compactMap { $0.int("version") })
        } ?? []
        return try migrations().filter { !applied.contains($0.version) }.map(\.name)
    }
}
