import Config

/// The notifier's triggers on the app's `check_ins`, without which no check-in reaches it.
///
/// A trigger belongs to a table, not to its name. When the app replaces `check_ins` — to partition
/// it by month with pg_partman, the usual way being a new table, the rows copied, the names swapped
/// (docs/operating.md, "Partitioning check_ins") — the triggers stay on the renamed old table and
/// the new one has none: no check-in is queued any more, the summary stops moving, and every user
/// who checks in afterwards looks missing. Nothing fails on its own; the first sign would be alerts
/// to the families of people who checked in. So `check`, the daemon's start, every run (the
/// daemon's, `--run-now`, `retry`) and the dry run ask first — one catalog query — and refuse
/// (exit 78) with the remedy: `sileme-notifier migrate`, which installs them on the current
/// `check_ins` and rebuilds the summary from it (migration 021's function).
package enum CheckInTriggers {
    /// The four triggers, named as migration 021's `sileme_install_check_in_triggers()` creates
    /// them (each calls the function of its own name in the notifier's schema): the queue of new
    /// check-ins, the summary's recomputation on updates and deletes, and TRUNCATE.
    package static let names = [
        "sileme_dequeue_check_in", "sileme_queue_check_in", "sileme_track_last_check_in", "sileme_truncate_last_check_in",
    ]

    /// What the catalog says of the `check_ins` the notifier reads.
    package struct Found: Sendable, Equatable {
        /// The table, schema-qualified where the search path needs it; nil when there is none.
        package var table: String?
        /// Whether it is partitioned (the usual reason it was replaced).
        package var partitioned: Bool
        /// Which of `names` are on it, enabled, calling the notifier's function of their name.
        package var present: Set<String>

        /// Creates the value.
        package init(table: String?, partitioned: Bool, present: Set<String>) {
            self.table = table
            self.partitioned = partitioned
            self.present = present
        }
    }

    /// One catalog query: the table `check_ins` resolves to and which of the triggers it carries
    /// (on a partitioned table they are on the parent; PostgreSQL puts each on every partition).
    /// A disabled trigger counts as missing: it sees nothing either.
    package static func find(_ db: PGConnection) throws -> Found {
        let row = try db.execute(SQLStatement("""
            SELECT c.oid::regclass::text AS table_name, coalesce(c.relkind = 'p', false) AS partitioned,
                   array_to_string(ARRAY(
                       SELECT t.tgname FROM pg_trigger t
                       JOIN pg_proc p ON p.oid = t.tgfoid
                       JOIN pg_namespace n ON n.oid = p.pronamespace
                       WHERE t.tgrelid = c.oid AND t.tgname = ANY ($names::text[]) AND t.tgenabled IN ('O', 'A')
                         AND p.proname = t.tgname AND n.nspname = $schema
                       ORDER BY t.tgname), ',') AS present
            FROM (SELECT to_regclass('check_ins') AS oid) r
            LEFT JOIN pg_class c ON c.oid = r.oid
            """), ["names": PGArray.literal(names), "schema": db.schema.name])[0]
        return Found(table: row.string("table_name"), partitioned: row.bool("partitioned"),
                     present: Set((row.string("present") ?? "").split(separator: ",").map(String.init)))
    }

    /// The decision: nil when every trigger is there, else what the operator reads — what is
    /// missing, what it means, and the remedy.
    package static func problem(_ found: Found) -> String? {
        guard let table = found.table else {
            return "there is no table check_ins on the connection's search path: the notifier has no check-ins to read"
        }
        let missing = names.filter { !found.present.contains($0) }
        guard !missing.isEmpty else { return nil }
        let replaced = found.partitioned ? " (it is partitioned: replaced since the last `migrate`, as an app's conversion does)" : ""
        return "the notifier's triggers on \(table)\(replaced) are missing or disabled: \(missing.joined(separator: ", ")). "
            + "Its check-ins no longer reach the notifier, and every user who checked in since would be alerted. "
            + "Run `sileme-notifier migrate`: it installs them on the current check_ins and rebuilds the last check-ins from it "
            + "(docs/operating.md, \"Partitioning check_ins\")"
    }

    /// Throws a configuration error (exit 78) when a trigger is missing.
    package static func verify(_ db: PGConnection) throws {
        guard let problem = problem(try find(db)) else { return }
        throw ConfigurationError(setting: "DATABASE_URL", reason: problem)
    }
}
