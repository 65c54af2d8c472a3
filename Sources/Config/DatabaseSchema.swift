/// `DATABASE_SCHEMA`: the PostgreSQL schema that holds the notifier's own state (default `sileme`)
/// — the check-in summary and queue, the all-clear queue, the known contacts, the runs, the run
/// lock, the migration record and every function — apart from the app's tables.
///
/// Apart because the app's schema may be served to the internet: on Supabase, `public` is the
/// REST API's, every table created there is granted to the roles of the app's anonymous key, and
/// a table without row-level security is open to anyone who has the app. A schema of its own is
/// served by no API and granted to nobody but the notifier's role.
package struct DatabaseSchema: Sendable, Equatable, CustomStringConvertible {
    /// The schema's name: lower-case letters, digits and `_`, so that it never needs quoting.
    package let name: String

    /// `sileme`, the default; SQL in this project names the notifier's objects `sileme.<name>`.
    package static let standard = DatabaseSchema(checked: "sileme")

    /// Schemas that are never the notifier's: the app's (`public`), PostgreSQL's own, and those
    /// Supabase creates and serves or manages.
    package static let refused: Set<String> = [
        "public", "information_schema", "auth", "storage", "graphql", "graphql_public", "realtime",
        "extensions", "vault", "supabase_functions", "supabase_migrations", "net", "cron", "pgbouncer",
    ]

    /// Validates a name from `DATABASE_SCHEMA`.
    package init(_ name: String) throws(ConfigurationError) {
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
        guard !name.isEmpty, name.utf8.count <= 63, allowed, !(name.first?.isNumber ?? true) else {
            throw ConfigurationError(setting: "DATABASE_SCHEMA",
                                     reason: "must be 1 to 63 lower-case letters, digits or '_', not starting with a digit (got \"\(name)\")")
        }
        guard !Self.refused.contains(name), !name.hasPrefix("pg_") else {
            throw ConfigurationError(setting: "DATABASE_SCHEMA",
                                     reason: "\"\(name)\" is not a schema of the notifier's own: it must be one no API serves and the app does not use")
        }
        self.name = name
    }

    private init(checked name: String) { self.name = name }

    package var description: String { name }
}
