import Config

/// Who else can reach what the notifier keeps: every table and function of its own schema, and
/// the app's tables it reads or writes, that a role other than its owner, the notifier's role,
/// a superuser or a `BYPASSRLS` role may read, change or call — for `check` to warn about, each
/// with the statement that closes it.
///
/// On Supabase such a role is an attack: `anon` is the role of the anonymous key inside every copy
/// of the app. `migrate` leaves nothing of the notifier's open to it; this finds what a later
/// grant, a default privilege or a hand-made change opened again. A role reaches a table of a
/// schema when it may use the schema and holds a privilege on the table (its own, a role's it
/// inherits, or PUBLIC's). For the app's tables only those without row-level security count: with
/// it on, the app's policies decide, as the design doc wants.
package enum Exposure {
    /// One role's reach into one object.
    package struct Finding: Sendable, Equatable, CustomStringConvertible {
        /// The object, schema-qualified: `sileme.user_last_check_in`, `sileme.sileme_fold_check_ins()`, `public.users`.
        package let object: String
        /// The role, or `PUBLIC` (every role).
        package let role: String
        /// What it may do: `SELECT`, `INSERT`, `UPDATE`, `DELETE`, `TRUNCATE`, `EXECUTE`.
        package let privileges: [String]
        /// Whether the object is the notifier's own (in its schema) rather than an app's table
        /// without row-level security.
        package let own: Bool

        /// The statement that closes it.
        package var fix: String {
            if object.hasSuffix("()") { return "REVOKE ALL ON FUNCTION \(object) FROM \(role);" }
            if own { return "REVOKE ALL ON \(object) FROM \(role);" }
            return "ALTER TABLE \(object) ENABLE ROW LEVEL SECURITY; (with the app's own policies) or REVOKE ALL ON \(object) FROM \(role);"
        }

        package var description: String {
            "role \(role) may \(privileges.joined(separator: ", ")) \(object)"
                + (own ? "" : ", which has no row-level security") + ": \(fix)"
        }
    }

    /// The roles never reported: PostgreSQL's own (`pg_*`) and the notifier's of
    /// `config/least-privilege.sql` (named `sileme_notifier…`), besides the connected role,
    /// superusers, `BYPASSRLS` roles and each object's owner (and the owner's members).
    static let notifierRolePattern = "sileme\\_notifier%"

    /// Every reach, ordered by object and role; empty when nothing is open.
    package static func findings(_ db: PGConnection) throws -> [Finding] {
        try db.execute(SQLStatement("""
            WITH roles AS (
                SELECT 'public'::text AS name, 'PUBLIC'::text AS shown, 0::oid AS oid
                UNION ALL
                SELECT rolname::text, quote_ident(rolname), oid FROM pg_roles
                WHERE NOT rolsuper AND NOT rolbypassrls AND rolname !~ '^pg_' AND rolname NOT LIKE $role_pattern
                  AND rolname <> current_user
            ), objects AS (
                SELECT c.oid, format('%I.%I', n.nspname, c.relname) AS object, n.oid AS nsp, c.relowner AS owner, true AS own
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = $schema AND c.relkind IN ('r', 'p')
                UNION ALL
                SELECT c.oid, format('%I.%I', n.nspname, c.relname), n.oid, c.relowner, false
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.oid IN (SELECT to_regclass(quote_ident(t)) FROM unnest($app_tables::text[]) t) AND NOT c.relrowsecurity
            )
            SELECT o.object, r.shown AS role, array_to_string(ARRAY(SELECT p FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p
                                                                    WHERE has_table_privilege(r.name, o.oid, p)), ',') AS privileges, o.own
            FROM objects o CROSS JOIN roles r
            WHERE CASE WHEN r.oid = 0 THEN true ELSE NOT pg_has_role(r.oid, o.owner, 'MEMBER') END
              AND has_schema_privilege(r.name, o.nsp, 'USAGE')
              AND has_table_privilege(r.name, o.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE')
            UNION ALL
            SELECT format('%I.%I()', n.nspname, p.proname), r.shown, 'EXECUTE', true
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace CROSS JOIN roles r
            WHERE n.nspname = $schema
              AND CASE WHEN r.oid = 0 THEN true ELSE NOT pg_has_role(r.oid, p.proowner, 'MEMBER') END
              AND has_schema_privilege(r.name, n.oid, 'USAGE')
              AND has_function_privilege(r.name, p.oid, 'EXECUTE')
            ORDER BY 1, 2
            """), ["schema": db.schema.name, "app_tables": PGArray.literal(OwnSchema.appTables + OwnSchema.sharedTables),
                   "role_pattern": notifierRolePattern]).rows.map { row in
            Finding(object: row.string("object") ?? "?", role: row.string("role") ?? "?",
                    privileges: (row.string("privileges") ?? "").split(separator: ",").map(String.init), own: row.bool("own"))
        }
    }
}
