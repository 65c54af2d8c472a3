import Foundation

/// The check-in queue of migration 012 (docs/data.md, "check_in_queue"): the app's insert
/// trigger only appends each check-in to `check_in_queue`; a fold moves the queued check-ins into
/// `user_last_check_in`, the summary, and queues the all-clears they call for. The daemon folds
/// every second (`foldInterval`) and every run folds first, as a step of its own. Readers never
/// fold: every statement that asks the summary reads `currentSummary`, the summary with the
/// check-ins still queued laid over it — so the dry run, the retry plan and the run decide alike,
/// and exactly, on a standby and as a role that may only read, whether or not anyone folded.
package enum CheckInQueue {
    /// SQL (a subquery: give it an alias): the summary as the check-ins say it now —
    /// `user_last_check_in` with the check-ins still queued laid over it — in its columns
    /// `user_id`, `last_check_in_date`, `last_notified_date` and `slot` (the user's slot key,
    /// `SlotSQL`). A user whose queued check-ins are newer than the summary's date (or who has no
    /// summary row yet) comes from the queue, every other user from the summary. A condition on the columns reaches both arms, so a range of
    /// dates is still a range scan of the summary's index; the queue is small (the daemon empties
    /// it every second), and empty it costs one anti-join probe per row read.
    package static let currentSummary = """
        (SELECT s.user_id, s.last_check_in_date, s.last_notified_date, s.slot FROM sileme.user_last_check_in s
         WHERE NOT EXISTS (SELECT 1 FROM sileme.check_in_queue q
                           WHERE q.user_id = s.user_id AND q.check_in_date > s.last_check_in_date)
         UNION ALL
         SELECT q.user_id, q.last,
                -- A first check-in: the latest accepted alert and the user's time, as the
                -- summary's insert trigger fills them.
                CASE WHEN s.user_id IS NULL
                     THEN (SELECT max(n.notification_date) FROM notification_logs n
                           WHERE n.user_id = q.user_id AND n.email_sent AND n.kind = 'alert')
                     ELSE s.last_notified_date END,
                coalesce(s.slot, (SELECT \(SlotSQL.key("u")) FROM users u WHERE u.id = q.user_id), '|')
         FROM (SELECT user_id, max(check_in_date) AS last FROM sileme.check_in_queue GROUP BY user_id) q
         LEFT JOIN sileme.user_last_check_in s ON s.user_id = q.user_id
         WHERE s.user_id IS NULL OR q.last > s.last_check_in_date)
        """

    /// Which summary a plan's statements read: `current` (the summary with the queue laid over
    /// it, `currentSummary`) or, when the plan reads in one snapshot in which the queue is empty,
    /// `folded` — the summary table alone, which then says exactly what `current` says: the
    /// check-in trigger queues each check-in in its own transaction, and the fold moves queued
    /// check-ins into the summary in one. The queue's anti-join and union are half of the
    /// planning of a run's due set (0.6 of 1.2 ms at a million users) — a cost every run pays,
    /// and a day of many slots has ~200 runs — and one probe per row read.
    package enum Summary: Sendable {
        case current, folded

        /// SQL (a subquery: give it an alias) with `currentSummary`'s columns.
        package var sql: String {
            switch self {
            case .current: currentSummary
            case .folded: "(SELECT s.user_id, s.last_check_in_date, s.last_notified_date, s.slot FROM sileme.user_last_check_in s)"
            }
        }
    }

    /// The summary the statements of `db`'s open transaction may read: `folded` only in a
    /// `REPEATABLE READ` (or stricter) transaction whose snapshot has an empty queue (a run
    /// reads right after its own fold: the queue is empty unless a check-in came in between).
    /// Outside a transaction, or in one whose statements each take a new snapshot, `current`.
    package static func summary(_ db: PGConnection) throws -> Summary {
        guard db.inTransaction else { return .current }
        let row = try db.execute("""
            SELECT current_setting('transaction_isolation') IN ('repeatable read', 'serializable')
                   AND NOT EXISTS (SELECT 1 FROM sileme.check_in_queue) AS folded
            """)[0]
        return row.bool("folded") ? .folded : .current
    }

    /// How often the daemon folds (the all-clear's latency is at most this plus one pass).
    package static let foldInterval: TimeInterval = 1

    /// Folds every committed queued check-in into the summary (one statement, its own
    /// transaction unless the caller has one open). Returns the users whose check-in ended a
    /// streak with an accepted alert: queued for an all-clear (and announced with
    /// `NOTIFY sileme_check_in`, for the other daemons). The fold's lock
    /// (`pg_advisory_xact_lock(hashtext('sileme_fold_check_ins'))`, held by another fold — a
    /// daemon's, a run's — for its statement) is waited for at most `lock_timeout`
    /// (`PGConnection.lockWaitSeconds`), as every row it writes: then it fails with the wait named.
    @discardableResult
    package static func fold(_ db: PGConnection) throws -> Set<String> {
        try db.withBoundedLocks {
            Set(try db.execute("SELECT u::text AS user_id FROM sileme.sileme_fold_check_ins() AS u").rows.compactMap { $0.string("user_id") })
        }
    }

    /// What waits in the queue: how many check-ins and how long the oldest has waited.
    package struct Backlog: Sendable, CustomStringConvertible {
        /// Longer than this and no notifier is folding: the daemon folds every second, so a
        /// check-in older than a minute means none runs (its all-clears wait for the next run).
        package static let staleAfterSeconds = 60

        /// Queued check-ins not yet in the summary.
        package let count: Int
        /// Seconds since the oldest of them was queued (0 when the queue is empty).
        package let oldestSeconds: Int

        /// Whether no notifier seems to be folding.
        package var isStale: Bool { count > 0 && oldestSeconds > Self.staleAfterSeconds }

        package var description: String {
            guard count > 0 else { return "empty: every check-in is in the summary" }
            let waiting = "\(count) check-in(s) waiting, the oldest for \(oldestSeconds) s"
            return isStale
                ? waiting + ": no notifier has folded them for over a minute (is the daemon running?); "
                    + "the summary and the all-clears they end wait for the daemon or the next run"
                : waiting + " (the daemon folds every second)"
        }
    }

    /// Whether nothing waits in the queue: one probe (`SELECT` on `check_in_queue`). The daemon
    /// asks before its fold every second: most seconds nothing was queued, and the fold — its
    /// statement's lock, writes and commit, and the stop's watcher thread around it — would be
    /// work for nothing, each second of a quiet day.
    package static func isEmpty(_ db: PGConnection) throws -> Bool {
        try db.execute("SELECT NOT EXISTS (SELECT 1 FROM sileme.check_in_queue) AS empty")[0].bool("empty")
    }

    /// Counts the queue (`SELECT` on `check_in_queue`; works on a standby too).
    package static func backlog(_ db: PGConnection) throws -> Backlog {
        let row = try db.execute("""
            SELECT count(*) AS queued, coalesce(extract(epoch FROM now() - min(queued_at))::bigint, 0) AS oldest_seconds
            FROM sileme.check_in_queue
            """)[0]
        return Backlog(count: row.int("queued") ?? 0, oldestSeconds: max(0, row.int("oldest_seconds") ?? 0))
    }
}
