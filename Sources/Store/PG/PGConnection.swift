import CLibPQ
import Config
import Foundation
import Values

/// One libpq connection: parameterised statements, transactions and row-by-row streaming.
///
/// Blocking by design: every call waits for the server. Use one connection per thread; the run
/// gives each worker its own. Not `Sendable`: it must not be shared between threads.
package final class PGConnection {
    private let handle: OpaquePointer
    private var direct: Bool?
    /// The statements `executePrepared` has prepared in this session: SQL text → name.
    private var prepared: [String: String] = [:]

    /// The schema of the notifier's own objects (`DATABASE_SCHEMA`): SQL run here that names them
    /// `sileme.<name>` reaches them there (`OwnSchema.qualified`).
    package let schema: DatabaseSchema

    /// Connects with a libpq connection string or URI (`""` uses the `PG*` variables and defaults).
    package init(_ conninfo: Secret, schema: DatabaseSchema,
                applicationName: String = "sileme-notifier") throws(DatabaseError) {
        // Validate into a local first: a throwing class init still runs deinit once self is set.
        // libpq takes the last value of a repeated key word, and the connection string counts where
        // `dbname` stands: the TCP settings before it are defaults the operator's string may change.
        var settings = Self.tcpDefaults
        if !conninfo.value.isEmpty { settings.append(("dbname", conninfo.value)) }
        settings += [("application_name", applicationName), ("connect_timeout", "10")]
        let keys = settings.map(\.0), values = settings.map(\.1)
        let connection: OpaquePointer? = Self.withCStrings(keys) { k in
            Self.withCStrings(values) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let connection else {
            throw DatabaseError(kind: .unreachable, sqlState: nil, message: "out of memory creating a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = ConnectionString.redacted(Self.trimmed(PQerrorMessage(connection)), conninfo: conninfo)
            PQfinish(connection)
            throw DatabaseError(kind: .unreachable, sqlState: nil, message: message)
        }
        // The first answer, within a bound: a pooler in session mode accepts the connection at
        // once and queues its first statement until a server session of its pool is free, which
        // may be never (the rest of the pool held by this very process).
        let answer: (pid: Int32?, lockTimeout: String?)
        switch Self.firstAnswer(connection, within: Self.sessionWaitSeconds) {
        case .success(let value): answer = value
        case .failure(let error):
            PQfinish(connection)
            throw error
        }
        handle = connection
        self.schema = schema
        direct = answer.pid.map { $0 == PQbackendPID(connection) } ?? false
        lockTimeout = answer.lockTimeout
        // Notices ("… already exists, skipping") are not for the operator's terminal. Dropped on
        // the client rather than with a session SET, which a transaction pooler would hand to
        // whichever client gets the server connection next.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// How long a new session waits for the server's first answer (`SELECT pg_backend_pid()`),
    /// beyond the connection itself (`connect_timeout`, 10 s). A connection pooler in session
    /// mode (PgBouncer, Supavisor) completes the connection at once and queues the first statement
    /// until a server session of its pool is free — for minutes (`query_wait_timeout`), or for
    /// ever when this process holds the rest of the pool. Past the bound the connection is closed
    /// and `DatabaseError.sessionWait` names the settings (docs/operating.md).
    package static let sessionWaitSeconds: TimeInterval = 10

    /// What a session that waited in vain says.
    static func sessionWaitMessage(_ seconds: TimeInterval) -> String {
        "no database session within \(Int(seconds)) s: the server, or a connection pooler with every session of its pool taken, "
            + "kept the connection waiting (a pooler in session mode must allow the sessions `sileme-notifier check` counts: "
            + "raise its pool size, PgBouncer's default_pool_size, or lower SMTP_CONNECTIONS)"
    }

    /// How long a statement waits for a lock another session holds (PostgreSQL's `lock_timeout`),
    /// on every session of the notifier: the run lock's row, the fold's advisory lock, the rows a
    /// claim or a record writes, a table an app's migration holds. Every lock the notifier takes
    /// itself is held for a moment (one statement; the fold of a long downtime's queue for longer),
    /// so a wait of this long is a session stuck with a lock — an `idle in transaction` client, a
    /// hung process — and the statement fails with SQLSTATE 55P03, named
    /// (`DatabaseError.lockWait`): the run fails and leaves its work due, the daemon tries again
    /// at its next step. Below half the daemon's watchdog interval (`WatchdogSec=60`, pinged at
    /// half of it), so a statement stuck behind a lock fails before systemd kills the daemon.
    /// A `lock_timeout` the operator set (the role's `ALTER ROLE … SET`, `options=-c lock_timeout=…`
    /// in `DATABASE_URL`) wins.
    package static let lockWaitSeconds = 20

    /// Sets `lock_timeout` to `lockWaitSeconds` unless one is set already: on a direct session
    /// for the session (`set_config(…, false)`: the session is the notifier's alone), through a
    /// connection pooler for the transaction (`true`: a pooler in transaction mode would hand a
    /// session setting to the next client). Returns the value in force.
    static func lockTimeoutSQL(local: Bool) -> String {
        """
        CASE WHEN current_setting('lock_timeout') = '0'
             THEN set_config('lock_timeout', '\(lockWaitSeconds)s', \(local)) ELSE current_setting('lock_timeout') END
        """
    }

    /// The session's `lock_timeout` (nil through a pooler, where it is set per transaction:
    /// `withBoundedLocks`).
    package let lockTimeout: String?

    /// Sends the first statement on a new connection — the server's process id, and on a direct
    /// session (its pid is libpq's start-up pid: no pooler between) `lock_timeout` for the session
    /// (`lockWaitSeconds`) — and waits at most `seconds` for its answer: the server's process id
    /// (nil when it sent none) and the session's `lock_timeout` (nil through a pooler).
    private static func firstAnswer(_ connection: OpaquePointer, within seconds: TimeInterval)
        -> Result<(pid: Int32?, lockTimeout: String?), DatabaseError> {
        func lost() -> DatabaseError {
            DatabaseError(kind: .unreachable, sqlState: nil, message: trimmed(PQerrorMessage(connection)))
        }
        let first = """
            SELECT pg_backend_pid(),
                   CASE WHEN pg_backend_pid() = \(PQbackendPID(connection)) THEN \(lockTimeoutSQL(local: false)) END
            """
        guard PQsendQuery(connection, first) == 1 else { return .failure(lost()) }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        while PQisBusy(connection) == 1 {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else {
                return .failure(DatabaseError(kind: .unreachable, sqlState: nil, message: sessionWaitMessage(seconds), sessionWait: true))
            }
            var wait = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
            guard wait.fd >= 0 else { return .failure(lost()) }
            let milliseconds = Int32(min(1000, (deadline - now) / 1_000_000 + 1))
            if poll(&wait, 1, milliseconds) < 0 && errno != EINTR { return .failure(lost()) }
            guard PQconsumeInput(connection) == 1 else { return .failure(lost()) }
        }
        var pid: Int32?
        var lockTimeout: String?
        var failure: DatabaseError?
        while let result = PQgetResult(connection) {
            if PQresultStatus(result) == PGRES_TUPLES_OK, PQntuples(result) == 1, let text = PQgetvalue(result, 0, 0) {
                pid = Int32(String(cString: text))
                if PQgetisnull(result, 0, 1) == 0, let value = PQgetvalue(result, 0, 1) { lockTimeout = String(cString: value) }
            } else if PQresultStatus(result) != PGRES_TUPLES_OK, failure == nil {
                let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
                let lostNow = PQstatus(connection) != CONNECTION_OK || (state?.hasPrefix("08") ?? false) || state == "57P01"
                failure = DatabaseError(kind: lostNow ? .unreachable : .statement, sqlState: state,
                                        message: trimmed(PQresultErrorMessage(result)))
            }
            PQclear(result)
        }
        if let failure { return .failure(failure) }
        return .success((pid, lockTimeout))
    }

    /// A session over TCP that the network stops carrying — a NAT or a load balancer that forgot
    /// an idle flow drops its packets without a word — would block a statement until the kernel
    /// gives up, about 15 minutes on Linux: the daemon keeps sessions idle between runs
    /// (`SessionKeeper`), and its watchdog (60 s) would kill it first. Keepalives every 60 s
    /// keep such a flow known, and a statement's data unacknowledged for 30 s ends the session
    /// with an error the caller retries on a new one. A connection string or URI may set others
    /// (`?keepalives_idle=…&tcp_user_timeout=…`); a Unix socket ignores them.
    static let tcpDefaults: [(String, String)] = [
        ("keepalives", "1"), ("keepalives_idle", "60"), ("keepalives_interval", "10"), ("keepalives_count", "3"),
        ("tcp_user_timeout", "30000"),
    ]

    /// The value libpq uses for connection option `keyword` in this session (`PQconninfo`).
    func option(_ keyword: String) -> String? {
        guard let options = PQconninfo(handle) else { return nil }
        defer { PQconninfoFree(options) }
        var index = 0
        while let name = options[index].keyword {
            if String(cString: name) == keyword { return options[index].val.map { String(cString: $0) } }
            index += 1
        }
        return nil
    }

    /// The server process id of this session (`pg_backend_pid()`).
    package var backendPID: Int32 { PQbackendPID(handle) }

    /// Whether this is a session of PostgreSQL itself rather than a connection pooler's client
    /// (PgBouncer, Supabase's pooler): only then does the server's `pg_backend_pid()` equal the
    /// process id libpq was given at start-up, since a pooler answers the start-up with a key of its
    /// own. Session state — a backend pid that dies with the process, advisory locks — is relied on
    /// only on a direct session. Asked once per connection, as its first statement.
    package var isDirect: Bool {
        get throws(DatabaseError) {
            if let direct { return direct }
            let server = try execute("SELECT pg_backend_pid() AS pid")[0].int("pid")
            let value = server.map { Int32($0) == PQbackendPID(handle) } ?? false
            direct = value
            return value
        }
    }

    /// Whether this session is kept from one use to the next (`SessionKeeper`): its server
    /// process outlives each use.
    var isKept = false

    /// Whether what this session claims (a message's row, the run lock) may be held by the life
    /// of its server process (`claim_backend_pid`, `holder_backend_pid`): a direct session that
    /// ends with its use. A pooler's session, or one the daemon keeps between runs
    /// (`SessionKeeper`), holds its claims by a lease (`CLAIM_LEASE_SECONDS`) instead: its
    /// process lives on after a use that left a claim unfinished.
    package var claimsByBackend: Bool {
        get throws(DatabaseError) { try isDirect && !isKept }
    }

    /// Whether the connection is sound and no transaction is open on it (it may be used again).
    var isReusable: Bool { PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Runs one statement with text parameters (`$1`, `$2`, … ; nil is SQL NULL) and returns all rows.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = []) throws(DatabaseError) -> PGResult {
        try againAfterDeadlock { () throws(DatabaseError) -> PGResult in
            let result = withParameters(parameters) { count, values in
                PQexecParams(handle, OwnSchema.qualified(sql, into: schema), count, nil, values, nil, nil, 0)
            }
            return try check(result)
        }
    }

    /// Runs `statement` again when PostgreSQL chose it as a deadlock's victim (40P01) and no
    /// transaction was open around it: it was rolled back whole, so run again a moment later it
    /// does what it would have done had it waited. Daemons that share a run's sending claim and
    /// record rows meeting from the due set's two ends, and each statement there is a transaction
    /// of its own. In a transaction the whole transaction is lost: the error is its caller's.
    private func againAfterDeadlock(_ statement: () throws(DatabaseError) -> PGResult) throws(DatabaseError) -> PGResult {
        var attempt: UInt32 = 0
        while true {
            do {
                return try statement()
            } catch where error.sqlState == "40P01" && PQtransactionStatus(handle) == PQTRANS_IDLE && attempt < Self.deadlockRetries {
                attempt += 1
                usleep(UInt32.random(in: 5_000...20_000) * attempt)
            }
        }
    }

    /// How often a statement chosen as a deadlock's victim is run again (`againAfterDeadlock`).
    static let deadlockRetries: UInt32 = 5

    /// Runs one statement as `execute` does, prepared once per session and then run by name, so
    /// the server parses and plans it once rather than at every call (a claim statement per few
    /// messages: about half of its server time). Only on a direct session: a pooler in
    /// transaction mode may run the next call on another server session, which never saw the
    /// statement; there it is `execute`. Should a change of the schema since make the plan unusable
    /// ("cached plan must not change result type", 0A000), it is prepared anew.
    @discardableResult
    func executePrepared(_ sql: String, _ parameters: [String?]) throws(DatabaseError) -> PGResult {
        guard try isDirect else { return try execute(sql, parameters) }
        do {
            return try runPrepared(sql, parameters)
        } catch where error.sqlState == "0A000" && PQtransactionStatus(handle) == PQTRANS_IDLE {
            if let name = prepared.removeValue(forKey: sql) { _ = try? execute("DEALLOCATE \(name)") }
            return try runPrepared(sql, parameters)
        }
    }

    private func runPrepared(_ sql: String, _ parameters: [String?]) throws(DatabaseError) -> PGResult {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "sileme_prepared_\(prepared.count + 1)"
            _ = try check(PQprepare(handle, name, OwnSchema.qualified(sql, into: schema), Int32(parameters.count), nil))
            prepared[sql] = name
        }
        return try againAfterDeadlock { () throws(DatabaseError) -> PGResult in
            let result = withParameters(parameters) { count, values in
                PQexecPrepared(handle, name, count, values, nil, nil, 0)
            }
            return try check(result)
        }
    }

    /// Runs a statement of several commands with no parameters (used for migrations).
    package func executeScript(_ sql: String) throws(DatabaseError) {
        _ = try check(PQexec(handle, OwnSchema.qualified(sql, into: schema)))
    }

    /// Runs a query and hands each row to `body`, fetching `batch` rows at a time through a cursor,
    /// so that a large result is never held in memory whole (and without single-row mode's cost of
    /// one result object per row). Opens a transaction around the cursor when none is open.
    /// `localSettings` are set for the rest of the transaction (`set_config(…, true)`, so a pooler
    /// in transaction mode never hands them to another client).
    func stream(_ sql: String, _ parameters: [String?] = [], batch: Int = 2000,
                       localSettings: [(name: String, value: String)] = [], row body: (PGRow) throws -> Void) throws {
        let cursor = "sileme_stream"
        try withLocalSettings(localSettings) {
            try execute("DECLARE \(cursor) NO SCROLL CURSOR FOR " + sql, parameters)
            while true {
                let result = try execute("FETCH \(batch) FROM \(cursor)")
                for index in 0..<result.count { try body(result[index]) }
                if result.count < batch { break }
            }
            try execute("CLOSE \(cursor)")
        }
    }

    /// Whether a transaction block is open on this connection (its statements share its isolation).
    package var inTransaction: Bool { PQtransactionStatus(handle) != PQTRANS_IDLE }

    /// Runs `body` with `settings` in force for the rest of the transaction (`set_config(…, true)`,
    /// so a pooler in transaction mode never hands them to another client), in a transaction of
    /// its own when none is open: committed when `body` returns, rolled back when it throws.
    package func withLocalSettings<T>(_ settings: [(name: String, value: String)], _ body: () throws -> T) throws -> T {
        try inTransaction(setting: {
            for setting in settings { try execute("SELECT set_config($1, $2, true)", [setting.name, setting.value]) }
        }, body)
    }

    /// Runs `setting` (statements that set something for the transaction), then `body`, in the
    /// open transaction, or in one of their own when none is open: committed when `body`
    /// returns, rolled back when either throws.
    private func inTransaction<T>(setting: () throws -> Void, _ body: () throws -> T) throws -> T {
        let own = PQtransactionStatus(handle) == PQTRANS_IDLE
        if own { try execute("BEGIN") }
        do {
            try setting()
            let value = try body()
            if own { try execute("COMMIT") }
            return value
        } catch {
            if own { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body`, whose statements run on this connection; should `stop` be raised meanwhile,
    /// the statement in progress is cancelled (`PQcancel`), so that `body` ends at once with the
    /// server's "canceling statement due to user request" (57014) instead of running on. A
    /// helper thread waits for the stop or for `body`'s end. A cancel request that reaches the
    /// server between two statements (or before the first: a stop raised before `body` began)
    /// cancels nothing, so after a stop the request is repeated every 100 ms until `body` ends:
    /// a statement that starts waiting on a lock after the stop is cancelled too.
    package func cancellable<T>(on stop: StopSignal, _ body: () throws -> T) throws -> T {
        guard let cancel = PQgetCancel(handle) else { return try body() }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            PQfreeCancel(cancel)
            return try body()
        }
        let (stopFD, endFD) = (stop.descriptor, fds[0])
        let request = Transfer(value: cancel)
        let ended = DispatchSemaphore(value: 0)
        let watcher = Thread {
            var waits = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0), pollfd(fd: endFD, events: Int16(POLLIN), revents: 0)]
            while poll(&waits, 2, -1) < 0 && errno == EINTR {}
            if waits[0].revents != 0 && waits[1].revents == 0 {
                var end = [pollfd(fd: endFD, events: Int16(POLLIN), revents: 0)]
                repeat {
                    var reason = [CChar](repeating: 0, count: 256)
                    _ = PQcancel(request.value, &reason, Int32(reason.count))
                } while poll(&end, 1, 100) == 0 || (end[0].revents == 0 && errno == EINTR)
            }
            ended.signal()
        }
        watcher.name = "sileme-pg-cancel"
        watcher.start()
        defer {
            var byte: UInt8 = 1
            _ = write(fds[1], &byte, 1)
            ended.wait()
            close(fds[0])
            close(fds[1])
            PQfreeCancel(cancel)
        }
        return try body()
    }

    /// Waits up to `timeout` seconds for `NOTIFY`s on the channels this session `LISTEN`s to, and
    /// returns their payloads (empty after the timeout, or at once when `stop` is raised). Throws
    /// when the connection is lost.
    package func waitForNotifications(timeout: TimeInterval, stop: StopSignal) throws(DatabaseError) -> [String] {
        var payloads = drainNotifications()
        guard payloads.isEmpty else { return payloads }
        var fds = [pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0),
                   pollfd(fd: stop.descriptor, events: Int16(POLLIN), revents: 0)]
        guard fds[0].fd >= 0 else { throw connectionError() }
        _ = poll(&fds, 2, Int32(max(0, min(timeout, 86400)) * 1000))
        if fds[0].revents != 0 {
            guard PQconsumeInput(handle) == 1 else {
                throw DatabaseError(kind: .unreachable, sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)))
            }
            payloads = drainNotifications()
        }
        return payloads
    }

    /// The payloads of the notifications libpq has read.
    private func drainNotifications() -> [String] {
        var payloads: [String] = []
        while let notice = PQnotifies(handle) {
            payloads.append(String(cString: notice.pointee.extra))
            PQfreemem(notice)
        }
        return payloads
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws. With
    /// `oneSnapshot`, `REPEATABLE READ`: every statement of `body` reads the database as of its
    /// first (a read-only one never fails for a concurrent write).
    package func transaction<T>(readOnly: Bool = false, oneSnapshot: Bool = false, _ body: () throws -> T) throws -> T {
        try execute("BEGIN" + (oneSnapshot ? " ISOLATION LEVEL REPEATABLE READ" : "") + (readOnly ? " READ ONLY" : ""))
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    private func check(_ result: OpaquePointer?) throws(DatabaseError) -> PGResult {
        guard let result else { throw connectionError() }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PGResult(result)
        default:
            let error = resultError(result)
            PQclear(result)
            throw error
        }
    }

    private func resultError(_ result: OpaquePointer) -> DatabaseError {
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let message = Self.trimmed(PQresultErrorMessage(result))
        let lost = PQstatus(handle) != CONNECTION_OK || (state?.hasPrefix("08") ?? false) || state == "57P01"
        if state == DatabaseError.lockTimeoutState {
            return DatabaseError(kind: .statement, sqlState: state, message: Self.lockWaitMessage(lockTimeout) + message, lockWait: true)
        }
        return DatabaseError(kind: lost ? .unreachable : .statement, sqlState: state, message: message)
    }

    /// What a statement that waited for a lock in vain says, before the server's message (whose
    /// CONTEXT names the lock: the fold's function, the relation of the row).
    static func lockWaitMessage(_ lockTimeout: String?) -> String {
        "gave up waiting for a lock another database session holds, after \(lockTimeout ?? "\(lockWaitSeconds)s") (lock_timeout; "
            + "an idle-in-transaction session or a stuck process holds it: see pg_stat_activity and pg_locks): "
    }

    /// Runs `body` with every lock wait of its statements bounded (`lockWaitSeconds`): on a
    /// direct session the session's `lock_timeout` does it already; through a pooler the setting
    /// is made local to a transaction around `body` (its own, or the caller's). For the
    /// statements whose locks other sessions take too, outside a transaction of the caller's:
    /// the run lock's row and the fold's lock.
    @discardableResult
    package func withBoundedLocks<T>(_ body: () throws -> T) throws -> T {
        if lockTimeout != nil { return try body() }
        return try inTransaction(setting: { try execute("SELECT " + Self.lockTimeoutSQL(local: true)) }, body)
    }

    private func connectionError() -> DatabaseError {
        DatabaseError(kind: PQstatus(handle) == CONNECTION_OK ? .statement : .unreachable,
                      sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)))
    }

    private func withParameters<R>(_ parameters: [String?], _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeBufferPointer { body(Int32(parameters.count), $0.baseAddress) }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        message.map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown error"
    }
}

extension PGConnection {
    /// Connects to the configured database (`url`: `DATABASE_URL` unless another is named, such
    /// as `\.readURL`) in its schema (`DATABASE_SCHEMA`): the one place that pairs the two, so
    /// that no connection reaches the notifier's objects in a schema other than the one set.
    package convenience init(_ database: DatabaseSettings, _ url: KeyPath<DatabaseSettings, Secret> = \.url,
                            applicationName: String = "sileme-notifier") throws(DatabaseError) {
        try self.init(database[keyPath: url], schema: database.schema, applicationName: applicationName)
    }
}
