import Config

/// Row-level security that would hide the app's rows from the notifier. A role that PostgreSQL
/// filters by policies it has none of (the app's own, such as `user_id = auth.uid()`) sees no
/// users at all: every run would look like a quiet morning while everyone due goes unmailed. So
/// `check`, every run, the dry run and `retry` ask first, and refuse (exit 78) naming the table.
///
/// A table is readable in full when row security is off for it, or the role bypasses it
/// (superuser, `BYPASSRLS`, or the table's owner without `FORCE ROW LEVEL SECURITY`), or a
/// permissive policy for reading names the role (or a role whose privileges it has) — as
/// `config/least-privilege.sql` creates — and no restrictive policy applies to it. What such a
/// policy's condition says is not checked: one written for the notifier should read `true`.
package enum RowSecurity {
    /// The app's tables the notifier must read in full (and `contact_status`, which it keeps).
    package static let tables = ["users", "check_ins", "emergency_contacts", "notification_logs", "contact_status"]

    /// The tables of `tables` whose rows the connected role may not all see.
    package static func hiddenTables(_ db: PGConnection) throws -> [String] {
        try db.execute(SQLStatement("""
            SELECT c.relname
            FROM pg_class c
            WHERE c.oid IN (SELECT to_regclass(t) FROM unnest($tables::text[]) t) AND c.relrowsecurity
              AND NOT (SELECT r.rolsuper OR r.rolbypassrls FROM pg_roles r WHERE r.rolname = current_user)
              AND NOT (pg_has_role(current_user, c.relowner, 'USAGE') AND NOT c.relforcerowsecurity)
              AND (NOT EXISTS (SELECT 1 FROM pg_policy p
                               WHERE p.polrelid = c.oid AND p.polpermissive AND p.polcmd IN ('r', '*')
                                 AND EXISTS (SELECT 1 FROM unnest(p.polroles) role
                                             WHERE role <> 0 AND pg_has_role(current_user, role, 'USAGE')))
                   OR EXISTS (SELECT 1 FROM pg_policy p
                              WHERE p.polrelid = c.oid AND NOT p.polpermissive AND p.polcmd IN ('r', '*')
                                AND EXISTS (SELECT 1 FROM unnest(p.polroles) role
                                            WHERE role = 0 OR pg_has_role(current_user, role, 'USAGE'))))
            ORDER BY c.relname
            """), ["tables": PGArray.literal(tables)]).rows.compactMap { $0.string("relname") }
    }

    /// Throws a configuration error naming the first table whose rows the role may not all see.
    package static func verify(_ db: PGConnection) throws {
        let hidden = try hiddenTables(db)
        guard let table = hidden.first else { return }
        let role = try db.execute("SELECT current_user AS role")[0].string("role") ?? "?"
        throw ConfigurationError(
            setting: "DATABASE_URL",
            reason: "row-level security on table \(table)\(hidden.count > 1 ? " (and \(hidden.dropFirst().joined(separator: ", ")))" : "") "
                + "hides rows from role \(role), which has no read policy of its own and does not bypass it: "
                + "every due user would go unseen. Give the role a read policy (config/least-privilege.sql creates one) "
                + "or BYPASSRLS, or connect as the tables' owner")
    }
}
