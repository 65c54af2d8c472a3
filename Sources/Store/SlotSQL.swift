import Foundation
import Rule
import Values

/// The SQL of each user's own time (docs/user-time.md): a user's slot key, the filter of a run
/// that serves some slots only, and the distinct slots.
public enum SlotSQL {
    /// SQL: the slot key of user row `user` (`zone|HH:MM:SS`, `''` for NULL) — the expression
    /// of `users_slot_idx` (migration 014), so that the index serves the filter and the skip scan.
    package static func key(_ user: String) -> String {
        "(coalesce(\(user).time_zone, '') || '|' || coalesce(\(user).notify_time::text, ''))"
    }

    /// SQL: user row `user` is in one of the slots `$slots` (a text array; NULL: every user).
    package static func filter(_ user: String) -> String {
        "($slots::text[] IS NULL OR \(key(user)) = ANY($slots::text[]))"
    }

    /// `$slots`' value for `keys` (nil: every user).
    package static func bind(_ keys: [String]?) -> String? { keys.map { PGArray.literal($0) } }

    /// SQL: `AND` the summary row `summary` (`CheckInQueue.currentSummary`'s columns) is of a user
    /// in `$slots` — the summary keeps each user's time (`slot`, migration 015), indexed with the
    /// date — or nothing at all when `keys` is nil, so that a count of everyone stays a scan of
    /// the date index. Bind with `binding(_:_:)`.
    package static func restrict(summary: String, _ keys: [String]?) -> String {
        keys == nil ? "" : "AND \(summary).slot = ANY($slots::text[])"
    }

    /// SQL: `AND` the user row `user` is in `$slots`, or nothing when `keys` is nil.
    package static func restrict(user: String, _ keys: [String]?) -> String {
        keys == nil ? "" : "AND \(key(user)) = ANY($slots::text[])"
    }

    /// SQL: the summary row `summary` is of a user in `$slots` (NULL: every user): the summary's
    /// own copy of the user's time, which its slot index serves.
    package static func summaryFilter(_ summary: String) -> String {
        "($slots::text[] IS NULL OR \(summary).slot = ANY($slots::text[]))"
    }

    /// `binds` with `$slots` when `keys` restricts the statement (`restrict(summary:_:)`, `restrict(user:_:)`).
    package static func binding(_ keys: [String]?, _ binds: [String: String?]) -> [String: String?] {
        keys.map { binds.merging(["slots": PGArray.literal($0)]) { $1 } } ?? binds
    }

    /// The distinct slot keys of all users, in order — a skip scan of `users_slot_idx`: one index
    /// probe per slot, whatever the number of users (the daemon reads them every minute).
    public static func keys(_ db: PGConnection) throws -> [String] {
        try db.execute("""
            WITH RECURSIVE slot(key) AS (
                (SELECT \(key("u")) FROM users u ORDER BY 1 LIMIT 1)
                UNION ALL
                SELECT (SELECT \(key("u")) FROM users u WHERE \(key("u")) > slot.key ORDER BY 1 LIMIT 1)
                FROM slot WHERE slot.key IS NOT NULL
            )
            SELECT key FROM slot WHERE key IS NOT NULL
            """).rows.compactMap { $0.string(0) }
    }

    /// The users of each slot among `keys` (for reporting the unknown zones: a few slots).
    public static func users(_ db: PGConnection, in keys: [String]) throws -> [String: Int] {
        guard !keys.isEmpty else { return [:] }
        var counts: [String: Int] = [:]
        for row in try db.execute("""
            SELECT \(key("u")), count(*) FROM users u WHERE \(key("u")) = ANY($1::text[]) GROUP BY 1
            """, [PGArray.literal(keys)]).rows {
            if let key = row.string(0) { counts[key] = row.int(1) ?? 0 }
        }
        return counts
    }

    /// The slot key of user `userID`; nil when there is no such user (or the id is not a UUID).
    public static func key(_ db: PGConnection, userID: String) throws -> String? {
        guard UUID(uuidString: userID) != nil else { return nil }
        return try db.execute("SELECT \(key("u")) FROM users u WHERE u.id = $1::uuid", [userID]).rows.first?.string(0)
    }

    /// Every user's slot, read now and resolved against the service's schedule `service` —
    /// `previous` itself when the keys are the same as its (the daemon's look a minute later).
    public static func slots(_ db: PGConnection, service: DailySchedule, previous: NotifySlots? = nil) throws -> NotifySlots {
        let keys = try keys(db)
        if let previous, previous.sameAs(keys: keys, service: service) { return previous }
        return NotifySlots(keys: keys, service: service)
    }
}
