import Values

/// One run at a time per database: a session-level PostgreSQL advisory lock held for the whole
/// run by the daemon, a `--run-now` and any replica. PostgreSQL releases it when the holder's
/// session ends, so a killed process never leaves it held. The claim key still prevents double
/// sends if two runs ever overlap.
public final class RunLock {
    /// The lock's key (an arbitrary constant: "sileme-notifier run").
    package static let key = "7345120002"
    private let connection: PGConnection
    private var held = true

    private init(connection: PGConnection) { self.connection = connection }

    /// Takes the lock without waiting; nil when another session holds it.
    public static func tryAcquire(_ conninfo: Secret) throws -> RunLock? {
        let db = try PGConnection(conninfo, applicationName: "sileme-notifier (run lock)")
        guard try db.execute("SELECT pg_try_advisory_lock(\(key))")[0].bool(0) else { return nil }
        return RunLock(connection: db)
    }

    /// Takes the lock, waiting for the current holder's run to end (asking again every half
    /// second); nil when `stop` is raised first.
    public static func acquire(_ conninfo: Secret, stop: StopSignal) throws -> RunLock? {
        let db = try PGConnection(conninfo, applicationName: "sileme-notifier (run lock)")
        while try !db.execute("SELECT pg_try_advisory_lock(\(key))")[0].bool(0) {
            guard stop.sleep(0.5) else { return nil }
        }
        return RunLock(connection: db)
    }

    /// Releases the lock (closing the session would too).
    public func release() {
        guard held else { return }
        held = false
        _ = try? connection.execute("SELECT pg_advisory_unlock(\(RunLock.key))")
    }

    deinit { release() }
}
