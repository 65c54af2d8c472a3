import Config
import Foundation
import Values

/// The daemon's database sessions, kept from one use to the next.
///
/// A new session is a new PostgreSQL server process whose first plans fill its catalog caches:
/// connecting and a run's first plans cost about 12 ms at a million users, more than the run's
/// statements themselves. With many slots the daemon runs ~200 times a day, and each run
/// opens several sessions (the run lock's, the slots' reader's, the run's, its senders' and its
/// recorder's), besides a scheduler session a minute and an all-clear pass every 30 s: kept, they
/// cost their statements only (bench/history/user-time.md).
///
/// A session comes from `take` — an idle one that still answers (`SELECT 1`), else a new one, named
/// `sileme-notifier (daemon)` whatever it is used for (it serves one use after another) —
/// and goes back with `keep`, which keeps it only while its connection is sound with no
/// transaction open, and at most `limit` idle ones. Sessions idle for longer than `idleSeconds`
/// are closed by `closeIdle` (the daemon's scheduler calls it every minute), so a service with one
/// run a day does not hold sessions open all day. A session from here holds its claims by a
/// lease (`PGConnection.claimsByBackend`): its server process outlives each run.
///
/// Shared by the daemon's threads (the scheduler, the all-clear pass, a run's senders): Sendable,
/// checked — its idle sessions are `Locked`, and a session taken is one thread's until it is
/// given back (`take` and `keep` hand it over; a `PGConnection` is never used by two at once).
package final class SessionKeeper: Sendable {
    private let conninfo: Secret
    private let schema: DatabaseSchema
    private let limit: Int
    private let idleSeconds: TimeInterval
    /// The idle sessions, the most recently given back last, with when each was given back.
    private let idle = Locked<[(session: PGConnection, since: Date)]>([])

    /// Keeps at most `limit` idle sessions of `conninfo`, each for at most `idleSeconds`.
    package init(_ conninfo: Secret, schema: DatabaseSchema, limit: Int, idleSeconds: TimeInterval = 600) {
        self.conninfo = conninfo
        self.schema = schema
        self.limit = limit
        self.idleSeconds = idleSeconds
    }

    /// The daemon's keeper for `database`: enough idle sessions for a run with `senders` senders
    /// (its senders, its recorder, the run's own, the run lock's, the slots' reader's) and the
    /// daemon's scheduler and all-clear pass beside it.
    package convenience init(_ database: DatabaseSettings, senders: Int) {
        self.init(database.url, schema: database.schema, limit: senders + 6)
    }

    /// The `application_name` of the kept sessions.
    package static let applicationName = "sileme-notifier (daemon)"

    /// A session: the most recently kept idle one that still answers, or a new one. Give it back with `keep`.
    package func take() throws(DatabaseError) -> PGConnection {
        while let kept = idle.withLock({ $0.popLast()?.session }) {
            if (try? kept.execute("SELECT 1")) != nil { return kept }
        }
        let session = try PGConnection(conninfo, schema: schema, applicationName: Self.applicationName)
        session.isKept = true
        return session
    }

    /// Gives `session` (from `take`) back: kept for the next `take` when it is sound, no
    /// transaction is open and fewer than `limit` are idle; closed otherwise.
    package func keep(_ session: PGConnection) {
        guard session.isKept, session.isReusable else { return }
        idle.withLock { idle in
            if idle.count < limit { idle.append((session, Date())) }
        }
    }

    /// Runs `body` on a session taken now and given back after (also when `body` throws: a
    /// broken or mid-transaction session is not kept).
    package func with<T>(_ body: (PGConnection) throws -> T) throws -> T {
        let session = try take()
        defer { keep(session) }
        return try body(session)
    }

    /// Closes the sessions idle since before `now − idleSeconds`.
    package func closeIdle(now: Date = Date()) {
        var closing: [PGConnection] = []
        idle.withLock { idle in
            closing = idle.filter { now.timeIntervalSince($0.since) > idleSeconds }.map(\.session)
            idle.removeAll { now.timeIntervalSince($0.since) > idleSeconds }
        }
        closing.removeAll()  // closed outside the lock, as their last references go
    }

    /// How many sessions are idle now.
    package var idleCount: Int { idle.withLock { $0.count } }
}
