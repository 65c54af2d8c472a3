import Foundation
import Rule
import Values

/// The SQL of the slots (docs/user-time.md): a user's slot key, the filter of a run
/// that serves some slots only, and the distinct slots.
package enum SlotSQL {
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
    /// in `$slots` — the summary keeps each user's slot key (`slot`, migration 015), indexed with the
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
    /// own copy of the user's slot key, which its slot index serves.
    package static func summaryFilter(_ summary: String) -> String {
        "($slots::text[] IS NULL OR \(summary).slot = ANY($slots::text[]))"
    }

    /// `binds` with `$slots` when `keys` restricts the statement (`restrict(summary:_:)`, `restrict(user:_:)`).
    package static func binding(_ keys: [String]?, _ binds: [String: String?]) -> [String: String?] {
        keys.map { binds.merging(["slots": PGArray.literal($0)]) { $1 } } ?? binds
    }

    /// The distinct slot keys of all users, in order — a skip scan of `users_slot_idx`: one index
    /// probe per slot, whatever the number of users (the daemon reads them when `changes` moved).
    package static func keys(_ db: PGConnection) throws -> [String] {
        try db.execute("""
            WITH RECURSIVE slot(key) AS (
                (SELECT \(key("u")) FROM users u ORDER BY 1 LIMIT 1)
                UNION ALL
                SELECT (SELECT \(key("u")) FROM users u WHERE \(key("u")) > slot.key ORDER BY 1 LIMIT 1)
                FROM slot WHERE slot.key IS NOT NULL
            )
            SELECT key FROM slot WHERE key IS NOT NULL
            """).rows.compactMap { $0.string("key") }
    }

    /// The users of each slot among `keys` (for reporting the unknown zones: a few slots).
    package static func users(_ db: PGConnection, in keys: [String]) throws -> [String: Int] {
        guard !keys.isEmpty else { return [:] }
        var counts: [String: Int] = [:]
        for row in try db.execute(SQLStatement("""
            SELECT \(key("u")) AS key, count(*) AS users FROM users u WHERE \(key("u")) = ANY($keys::text[]) GROUP BY 1
            """), ["keys": PGArray.literal(keys)]).rows {
            if let key = row.string("key") { counts[key] = row.int("users") ?? 0 }
        }
        return counts
    }

    /// How many users have the empty text as their `time_zone` (served like users without one):
    /// one probe of migration 020's partial index.
    package static func emptyZoneUsers(_ db: PGConnection) throws -> Int {
        try db.execute("SELECT count(*) AS users FROM users WHERE time_zone = ''").rows.first?.int("users") ?? 0
    }

    /// The slot key of user `userID`; nil when there is no such user (or the id is not a UUID).
    package static func key(_ db: PGConnection, userID: String) throws -> String? {
        guard UUID(uuidString: userID) != nil else { return nil }
        return try db.execute(SQLStatement("SELECT \(key("u")) AS key FROM users u WHERE u.id = $user_id::uuid"), ["user_id": userID])
            .rows.first?.string("key")
    }

    /// Every user's slot, read now and resolved against the service's schedule `service`.
    package static func slots(_ db: PGConnection, service: DailySchedule) throws -> NotifySlots {
        NotifySlots(keys: try keys(db), service: service)
    }

    /// How many times the slots have changed: moved by migration 019's triggers, in the
    /// transaction of every change that can add or remove a slot (a user added or removed with a
    /// zone or a time, either changed). One row.
    package static func changes(_ db: PGConnection) throws -> Int64 {
        Int64(try db.execute("SELECT changes FROM sileme.user_times_changes")[0].string("changes") ?? "") ?? 0
    }

    /// The slots as the daemon's last look read them.
    package struct Known: Sendable {
        /// The slots.
        package let slots: NotifySlots
        /// The count of changes (`changes(_:)`) read just before the slots' keys.
        let changes: Int64
        /// When the keys were read.
        let readAt: Date

        /// How long known slots are kept at most without reading the keys again, though the count
        /// has not moved: a change the triggers did not see (they are off while a restore or a
        /// replica's apply writes with `session_replication_role = replica`) is learnt within this.
        package static let keptAtMost: TimeInterval = 3_600

        /// These slots are still the users' slots at `now`, with `changes` counted and the service's
        /// schedule `service` — pure: what `look` decides before reading any key.
        func current(changes: Int64, service: DailySchedule, now: Date) -> Bool {
            changes == self.changes && slots.service == service && now.timeIntervalSince(readAt) < Self.keptAtMost
        }
    }

    /// The slots at the daemon's look: `known` itself when the count of changes has not
    /// moved since it was read (one probe, instead of the skip scan's one per slot), else the keys
    /// read again — and `known`'s slots kept when the keys are the same (their zone lookups with
    /// them). The count is read before the keys, each statement in its own snapshot: a change
    /// committed between the two is in the keys and moves the count past what is kept, so the next
    /// look reads the keys again; the other order could keep the old keys for good.
    package static func look(_ db: PGConnection, service: DailySchedule, known: Known?, now: Date) throws -> Known {
        let changes = try changes(db)
        if let known, known.current(changes: changes, service: service, now: now) { return known }
        let keys = try keys(db)
        let slots = known.flatMap { $0.slots.sameAs(keys: keys, service: service) ? $0.slots : nil }
            ?? NotifySlots(keys: keys, service: service)
        return Known(slots: slots, changes: changes, readAt: now)
    }
}
