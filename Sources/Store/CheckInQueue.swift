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
        Set(try db.execute("SELECT u::text FROM sileme_fold_check_ins() AS u").rows.compactMap { $0.string(0) })
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
        let waiting = try db.execute("""
            SELECT count(*), extract(epoch FROM now() - min(queued_at))::bigint FROM check_in_queue
            """)[0]
        guard let count = waiting.int(0), count > 0 else { return nil }
        let why = standby ? "this is a standby" : "this role may not run sileme_fold_check_ins()"
        return "\(count) check-in(s) of the last \(waiting.int(1) ?? 0) s are not yet in the summary (\(why); "
            + "the daemon folds them every second): a user among them may be listed as due"
    }
}
