import Config
import Foundation
import Values

/// One run at a time per database: the one row of `notifier_run_lock`, held by the daemon, a
/// `--run-now`, `retry` and any replica for the whole run — and kept by no database session, so
/// that it works through a connection pooler (where a session-level advisory lock would live on in
/// a pooled server connection after its run was killed, and block every later run).
///
/// The row is free when its holder deleted it (release), when its lease ran out
/// (`CLAIM_LEASE_SECONDS`; a thread renews it every quarter of that while the run lasts), or at
/// once when its holder took it on a direct connection that is gone (`holder_backend_pid`, the
/// same test as a claim's: `ClaimSQL.held`). So a killed run never blocks the next one for longer
/// than the lease, and on a direct connection not at all. The claim key still prevents double
/// sends should two runs ever overlap.
///
/// Sendable, checked (the renewal thread holds it): its changing values are `Locked`. The lock's
/// session is the renewal thread's until `release` has joined that thread, then `release`'s:
/// never used by two threads at once.
package final class RunLock: Sendable {
    private let conninfo: Secret
    private let schema: DatabaseSchema
    private let holder: String
    private let leaseSeconds: Double
    /// Where the lock's session comes from and goes back to once the lock is released (the daemon's).
    private let keeper: SessionKeeper?
    private let released = StopSignal()
    private let renewerDone = DispatchSemaphore(value: 0)
    /// Used by the renewal thread only, until `release` has joined it.
    private let connection: Locked<PGConnection?>
    /// Until `release` (from the holder, or `deinit`).
    private let held = Locked(true)

    private init(conninfo: Secret, schema: DatabaseSchema, connection: PGConnection, holder: String, leaseSeconds: Double,
                 keeper: SessionKeeper?) {
        self.conninfo = conninfo
        self.schema = schema
        self.keeper = keeper
        self.connection = Locked(connection)
        self.holder = holder
        self.leaseSeconds = leaseSeconds
        let thread = Thread { [self] in
            renewUntilReleased()
            renewerDone.signal()
        }
        thread.name = "sileme-run-lock"
        thread.start()
    }

    /// What a taker does while another run holds the lock.
    package enum Waiting: Sendable {
        /// Gives up at once (the daemon: it looks again later).
        case no
        /// Waits for the holder's run to end, asking again every half second, for at most
        /// `seconds` (then `BoundedWait.Exceeded`, naming the holder) or until `stop` is raised;
        /// `say` hears at once that it waits, then what it waits for — the holder, since when —
        /// after `BoundedWait.noticeAfter` and every `noticeEvery` (a `--run-now` or `retry` says so).
        case upTo(TimeInterval, StopSignal, say: @Sendable (String) -> Void = { _ in })
    }

    /// The most a `--run-now`, `retry` or `release` waits for another run to let the run lock go
    /// (`Waiting.upTo`): a daemon's run of a large instant may send for many minutes — its
    /// senders at the relay's pace — and the lock's holder renews it while its process lives, so
    /// a run that hangs would hold it for ever; half an hour is far past a run's usual length,
    /// and the command then ends with exit 75, naming the holder, its work left due.
    package static let commandWaitSeconds: TimeInterval = 1800

    /// Takes the lock for a run on `database` (its URL and schema) with `leaseSeconds`; nil when
    /// another run holds it and `waiting` gave up (or its stop was raised). The one way every
    /// run — the daemon's, `--run-now`, `retry` — takes it. With `keeper` (the daemon's), the
    /// lock's session comes from it and goes back to it once the lock row is deleted: a kept
    /// session never holds the row, so its `holder_backend_pid` still tells a live holder.
    package static func take(for database: DatabaseSettings, leaseSeconds: Double, waiting: Waiting,
                            keeper: SessionKeeper? = nil) throws -> RunLock? {
        try take(database.url, schema: database.schema, leaseSeconds: leaseSeconds, waiting: waiting, keeper: keeper)
    }

    /// `take(for:waiting:)` with the connection spelled out.
    package static func take(_ conninfo: Secret, schema: DatabaseSchema, leaseSeconds: Double,
                            waiting: Waiting = .no, keeper: SessionKeeper? = nil) throws -> RunLock? {
        let db = try connect(conninfo, schema: schema, keeper: keeper)
        let holder = Self.newHolder()
        let taken: Bool?
        switch waiting {
        case .no:
            taken = try take(db, holder: holder, leaseSeconds: leaseSeconds) ? true : nil
        case .upTo(let seconds, let stop, let say):
            var told = false
            taken = try BoundedWait("the run lock (notifier_run_lock) held by another run", bound: seconds)
                .poll(every: 0.5, stop: stop, say: say) { wait in
                    if try take(db, holder: holder, leaseSeconds: leaseSeconds) { return true }
                    if let other = try? Self.holder(db) { wait.what = "the run lock (notifier_run_lock) held by \(other)" }
                    if !told { say("another run is in progress on this database (\(wait.what)); waiting for it to finish, at most \(Int(seconds)) s") }
                    told = true
                    return nil
                }
        }
        guard taken == true else {
            keeper?.keep(db)
            return nil
        }
        return RunLock(conninfo: conninfo, schema: schema, connection: db, holder: holder, leaseSeconds: leaseSeconds, keeper: keeper)
    }

    /// Who holds the lock, for a person: "host:pid:id since 2026-01-13 09:00:01+00".
    private static func holder(_ db: PGConnection) throws -> String? {
        try db.execute("""
            SELECT holder || ' since ' || date_trunc('second', acquired_at)::text AS holder FROM sileme.notifier_run_lock WHERE id = 1
            """).rows.first?.string("holder")
    }

    /// A session for the lock: the keeper's, or a new one.
    private static func connect(_ conninfo: Secret, schema: DatabaseSchema, keeper: SessionKeeper?) throws -> PGConnection {
        if let keeper { return try keeper.take() }
        return try PGConnection(conninfo, schema: schema, applicationName: "sileme-notifier (run lock)")
    }

    /// Releases the lock (a lock not released runs out with its lease, or with its direct session).
    package func release() {
        let wasHeld = held.withLock { held in
            defer { held = false }
            return held
        }
        guard wasHeld else { return }
        released.stop()
        renewerDone.wait()
        // The renewal thread has ended: the session is this thread's now (closed as it goes when not kept).
        if let connection = connection.withLock({ $0.take() }),
           (try? connection.withBoundedLocks { try connection.execute(Self.releaseStatement, ["holder": holder]) }) != nil {
            keeper?.keep(connection)
        }
    }

    deinit { release() }

    /// Gives the lock up (`release`).
    private static let releaseStatement = SQLStatement("DELETE FROM sileme.notifier_run_lock WHERE holder = $holder")

    /// Extends the lease, and records the session's pid anew (`renewUntilReleased`).
    private static let renewStatement = SQLStatement("""
        UPDATE sileme.notifier_run_lock SET expires_at = now() + make_interval(secs => $lease_seconds::float8),
               holder_backend_pid = CASE WHEN $direct::boolean THEN pg_backend_pid() END
        WHERE holder = $holder
        """)

    /// `host:pid:random`: unique to this acquisition.
    private static func newHolder() -> String {
        "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// SQL: the lock's row `row` is held — its holder's direct session lives, or its lease has not
    /// run out (the claims' test: `ClaimSQL.held`).
    package static func heldCondition(_ row: String) -> String {
        ClaimSQL.held(pid: "\(row).holder_backend_pid", takenAt: "\(row).acquired_at", leaseValid: "\(row).expires_at >= now()")
    }

    /// Inserts the row, or takes it over when it is free; true when `holder` holds it now.
    private static func take(_ db: PGConnection, holder: String, leaseSeconds: Double) throws -> Bool {
        let held = heldCondition("l")
        // A row lock on the lock's row is held for a moment by its holder's renewal; longer only
        // by a stuck session, which `withBoundedLocks` bounds.
        return try db.withBoundedLocks { try db.execute(SQLStatement("""
            INSERT INTO sileme.notifier_run_lock AS l (id, holder, holder_backend_pid, acquired_at, expires_at)
            VALUES (1, $holder, CASE WHEN $direct::boolean THEN pg_backend_pid() END, now(), now() + make_interval(secs => $lease_seconds::float8))
            ON CONFLICT (id) DO UPDATE
                SET holder = EXCLUDED.holder, holder_backend_pid = EXCLUDED.holder_backend_pid,
                    acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
                WHERE NOT coalesce(\(held), false)
            RETURNING holder
            """), ["holder": holder, "direct": String(try db.isDirect), "lease_seconds": String(leaseSeconds)]).count == 1 }
    }

    /// Extends the lease every quarter of it until `release`; a broken connection is opened again
    /// at the next turn.
    private func renewUntilReleased() {
        while released.sleep(leaseSeconds / 4) {
            do {
                let db = try connection.withLock({ $0 }) ?? Self.connect(conninfo, schema: schema, keeper: keeper)
                connection.withLock { $0 = db }
                // After a reconnect the old session's pid is gone: record the new one (or none).
                try db.withBoundedLocks {
                    try db.execute(Self.renewStatement, ["holder": holder, "lease_seconds": String(leaseSeconds),
                                                         "direct": String(try db.isDirect)])
                }
            } catch {
                connection.withLock { $0 = nil }
            }
        }
    }
}
