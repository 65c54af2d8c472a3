import Config
import Store
import Values

extension HealthCheck.Part {
    /// `database`: it answers, its version, the schema current (`migrate` run; exit 1 if not, 69
    /// unreachable); `database sessions`; `row security` (78). Then, the schema current, the reads
    /// of every part that applies, in the list's order, over this one session, closed before the
    /// next part's lines. A failure of the session is one more `database` line after those made.
    static let database = Self(lines: { context in
        var lines: [Finding] = []
        do {
            try HealthCheck.database(&context, into: &lines)
        } catch let error as DatabaseError {
            lines.append(Finding(subject: "database", ok: false, detail: error.description,
                                 failure: error.kind == .unreachable ? .unavailable : .failure))
        } catch {
            lines.append(Finding(subject: "database", ok: false, detail: "\(error)", failure: .configuration))
        }
        return lines
    })

    /// `read database`: `DATABASE_READ_URL` answers, a hot standby or not.
    static let readDatabase = Self(when: { $0.databaseReadURL != nil }, lines: { context in
        do throws(DatabaseError) {
            let standby = try PGConnection(context.configuration.database, \.readURL)
            let recovering = try standby.execute(SQLStatement("SELECT pg_is_in_recovery() AS recovering"))[0].bool("recovering")
            return [Finding(subject: "read database", ok: true,
                            detail: recovering ? "a hot standby answers (DATABASE_READ_URL)" : "answers (DATABASE_READ_URL; not a standby)")]
        } catch {
            return [Finding(subject: "read database", ok: false, detail: error.description,
                            failure: error.kind == .unreachable ? .unavailable : .failure)]
        }
    })
}

extension HealthCheck {
    /// The database's lines, each appended as it is made; then, the schema current, each part's
    /// read over the session. Throws what fails the session (`lines` keeps what came before).
    static func database(_ context: inout Context, into lines: inout [Finding]) throws {
        let db = try PGConnection(context.configuration.database)
        let version = try db.execute(SQLStatement("SHOW server_version"))[0].string("server_version") ?? "?"
        let pending = try Migrator(directory: context.configuration.migrationsDirectory).pending(db)
        lines.append(Finding(subject: "database", ok: pending.isEmpty,
                             detail: pending.isEmpty ? "PostgreSQL \(version), schema current"
                                 : "PostgreSQL \(version), migrations pending: \(pending.joined(separator: ", ")) (run `sileme-notifier migrate`)"))
        lines.append(sessions(DatabaseSessions(context.configuration), pooled: (try? db.isDirect).map { !$0 }))
        lines.append(try rowSecurity(db))
        guard pending.isEmpty else { return }
        for part in context.parts where part.applies(to: context.configuration) {
            if let read = part.read { lines += try read(db, &context) }
        }
    }

    /// The `row security` line: every row of the notifier's tables readable by its role (78 if
    /// not); another error is the database's.
    static func rowSecurity(_ db: PGConnection) throws -> Finding {
        do {
            try RowSecurity.verify(db)
            return Finding(subject: "row security", ok: true, detail: "every row of \(RowSecurity.tables.joined(separator: ", ")) is readable")
        } catch let error as ConfigurationError {
            return Finding(subject: "row security", ok: false, detail: error.description, failure: .configuration)
        }
    }

    /// The database sessions held at most (`DatabaseSessions`), and what a pooler must allow.
    static func sessions(_ sessions: DatabaseSessions, pooled: Bool?) -> Finding {
        let most = pooled == false ? sessions.daemonDirect : sessions.daemon
        let detail = "held at most: \(sessions)"
            + (pooled == true
               ? "; DATABASE_URL goes through a connection pooler: in session mode its pool for this database and user must allow \(most) "
                 + "(PgBouncer's default_pool_size), at least \(DatabaseSessions.minimumForRun) for a run with one sender"
               : "; within PostgreSQL's max_connections (\(most) for the daemon)")
        return Finding(subject: "database sessions", ok: true, detail: detail)
    }
}
