import Config

/// The notifier's own objects, which live in its own schema (`DATABASE_SCHEMA`, default `sileme`)
/// rather than beside the app's tables, where an API may serve them (docs/data.md, "Where the
/// notifier's state lives").
///
/// SQL in this project names them qualified with the default schema, `sileme.notifier_runs`, so
/// that what the code says is what `psql` shows on a default installation; a connection for
/// another schema rewrites those names (`qualified(_:into:)`). Qualified rather than found through
/// `search_path`, because a transaction pooler (PgBouncer, Supabase's pooler) does not carry a
/// session's `search_path` from one transaction to the next.
package enum OwnSchema {
    /// The tables, each moved here from the app's schema by migration 013 where an older version
    /// had created it there.
    package static let tables = [
        "user_last_check_in", "check_in_queue", "pending_all_clears", "known_contacts",
        "notifier_runs", "notifier_run_lock", "sileme_schema_migrations",
    ]
    /// The functions (all `SECURITY DEFINER`, none with arguments): the triggers' and the fold.
    package static let functions = [
        "sileme_track_last_check_in", "sileme_truncate_last_check_in", "sileme_track_last_notified",
        "sileme_fill_last_notified", "sileme_note_contact", "sileme_queue_check_in",
        "sileme_fold_check_ins", "sileme_dequeue_check_in",
    ]
    /// The app's tables that the notifier creates or writes and the app reads or writes; they stay
    /// in the app's schema, with row-level security on.
    package static let sharedTables = ["emergency_contacts", "contact_status"]
    /// The app's own tables of the design doc, which the notifier reads (and writes `notification_logs`).
    package static let appTables = ["users", "check_ins", "notification_logs"]

    /// `sql` with every `sileme.<name>` that names a schema (not preceded by a letter, digit, `_`,
    /// `@`, `.` or `$`: never a host name such as `noreply@sileme.app`) changed to `schema.<name>`.
    package static func qualified(_ sql: String, into schema: DatabaseSchema) -> String {
        guard schema != .standard else { return sql }
        let prefix = "sileme."
        var result = ""
        var rest = Substring(sql)
        while let found = rest.range(of: prefix) {
            result += rest[..<found.lowerBound]
            let previous = result.last
            let startsName = previous.map { !($0.isLetter || $0.isNumber || "_@.$".contains($0)) } ?? true
            let next = rest[found.upperBound...].first
            let nameFollows = next.map { $0 == "_" || ("a"..."z").contains($0) } ?? false
            result += startsName && nameFollows ? schema.name + "." : prefix
            rest = rest[found.upperBound...]
        }
        return result + rest
    }
}
