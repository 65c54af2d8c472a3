import Foundation

/// The check-in queue of migration 012 (docs/data.md, "The check-in queue"): the app's insert
/// trigger only appends each check-in to `check_in_queue`; a fold moves the queued check-ins into
/// `user_last_check_in`, the summary every run reads. The daemon folds every second
/// (`foldInterval`); every run and `retry` folds before it reads, and so do the readers of the
/// summary (the dry run, the retry plan) where they can write: the fold only writes down
/// check-ins that are already committed, so it changes no decision — it makes the summary say
/// what the check-ins say. (`--preview` and the history report read `check_ins` itself.)
public enum CheckInQueue {
    /// How often the daemon folds (the all-clear's latency is at most this plus one pass).
    public static let foldInterval: TimeInterval = 1

    /// Folds every committed queued check-in into the summary (one statement, its own
    /// transaction unless the caller has one open). Returns the users whose check-in ended a
    /// streak with an accepted alert: queued for an all-clear (and announced with
    /// `NOTIFY sileme_check_in`, for the other daemons).
    @discardableResult
    public static func fold(_ db: PGConnection) throws -> Set<String> {
        Set(try db.execute("SELECT u::text FROM sileme.sileme_fold_check_ins() AS u").rows.compactMap { $0.string(0) })
    }

    /// What waits in the queue: how many check-ins and how long the oldest has waited.
    public struct Backlog: Sendable, CustomStringConvertible {
        /// Longer than this and no notifier is folding: the daemon folds every second, so a
        /// check-in older than a minute means none runs (its all-clears wait for the next run).
        public static let staleAfterSeconds = 60

        /// Queued check-ins not yet in the summary.
        public let count: Int
        /// Seconds since the oldest of them was queued (0 when the queue is empty).
        public let oldestSeconds: Int

        /// Whether no notifier seems to be folding.
        public var isStale: Bool { count > 0 && oldestSeconds > Self.staleAfterSeconds }

        public var description: String {
            guard count > 0 else { return "empty: every check-in is in the summary" }
            let waiting = "\(count) check-in(s) waiting, the oldest for \(oldestSeconds) s"
            return isStale
                ? waiting + ": no notifier has folded them for over a minute (is the daemon running?); "
                    + "the summary and the all-clears they end wait for the daemon or the next run"
                : waiting + " (the daemon folds every second)"
        }
    }

    /// Counts the queue (`SELECT` on `check_in_queue`; works on a standby too).
    public static func backlog(_ db: PGConnection) throws -> Backlog {
        let row = try db.execute("""
            SELECT count(*), coalesce(extract(epoch FROM now() - min(queued_at))::bigint, 0) FROM sileme.check_in_queue
            """)[0]
        return Backlog(count: row.int(0) ?? 0, oldestSeconds: max(0, row.int(1) ?? 0))
    }

    /// Before a reader's transaction on `db` (the read URL): folds when it can. On a standby (read
    /// only) or as a role not allowed to fold, it cannot: then it returns what the reader should
    /// tell the operator when check-ins are waiting — the summary it reads is the primary's last
    /// fold, so a user among them may be listed as due. Nil when the summary is up to date.
    public static func prepareToRead(_ db: PGConnection) throws -> String? {
        let standby = try db.execute("SELECT pg_is_in_recovery()")[0].bool(0)
        if !standby {
            do {
                try fold(db)
                return nil
            } catch let error as DatabaseError where error.sqlState == "42501" {
                // Not granted: fall through to what is waiting.
            }
        }
        let waiting = try backlog(db)
        guard waiting.count > 0 else { return nil }
        let why = standby ? "this is a standby" : "this role may not run sileme_fold_check_ins()"
        return "\(waiting.count) check-in(s) of the last \(waiting.oldestSeconds) s are not yet in the summary (\(why); "
            + "the daemon folds them every second): a user among them may be listed as due"
    }
}
