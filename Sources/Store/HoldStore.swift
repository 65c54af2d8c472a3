import Foundation
import Rule
import Values

/// The SQL of the intake guard (docs/intake-hold.md): each day's intake, which the fold keeps in
/// `daily_intake` (migration 016), and the alerts held over a gap (`held_alerts`).
package enum HoldStore {
    /// The intake of each day of `days` that had any, by the users' zone: the folded check-ins
    /// (`daily_intake`) and the queued ones not folded yet, so that a reader that does not fold
    /// (the dry run) sees the same days a run does — as read at `now`, each zone's days over
    /// there before its own date (`IntakeGuard.Intake`). A few rows a zone and day, and the
    /// queue; never `check_ins`.
    package static func intake(_ db: PGConnection, days: ClosedRange<CalendarDate>, now: Date = Date(),
                               serviceZone: TimeZone) throws -> IntakeGuard.Intake {
        var counts: [CalendarDate: [String: Int]] = [:]
        for row in try db.execute(SQLStatement("""
            SELECT day::text AS day, time_zone, sum(users)::text AS users FROM (
                SELECT day, time_zone, users FROM sileme.daily_intake WHERE day BETWEEN $first::date AND $last::date
                UNION ALL
                SELECT q.check_in_date, \(zoneKey("u")), count(*) FROM sileme.check_in_queue q
                LEFT JOIN users u ON u.id = q.user_id
                WHERE q.check_in_date BETWEEN $first::date AND $last::date GROUP BY 1, 2
            ) i GROUP BY day, time_zone
            """), ["first": days.lowerBound.description, "last": days.upperBound.description]).rows {
            if let day = row.date("day") { counts[day, default: [:]][row.string("time_zone") ?? ""] = row.int("users") ?? 0 }
        }
        return IntakeGuard.Intake(counts: counts, at: now, serviceZone: serviceZone)
    }

    /// SQL: the zone key `daily_intake` counts the user row `user` under — its `time_zone` as
    /// stored, `''` for none; cut to 64 characters, so that no text of the app's makes a long key
    /// (no zone name is that long). Migration 031's fold and rebuild say the same.
    static func zoneKey(_ user: String) -> String { "left(coalesce(\(user).time_zone, ''), 64)" }

    /// One streak's hold: the user and `L'`.
    package struct Streak: Sendable, Hashable {
        package let userID: String
        package let since: CalendarDate

        /// Creates the value.
        package init(userID: String, since: CalendarDate) {
            self.userID = userID
            self.since = since
        }
    }

    /// SQL (a lateral subquery, one row) over the batch query's user `user`: the user's holds of
    /// the streaks that start (`L'`) between `$holds_first` and `$holds_last` — ended ones too: a
    /// streak whose hold ended is never held again — as one text (`recorded(_:)` reads it), when
    /// `condition` holds and the range is bound (else NULL: no probe). One probe of the table's
    /// key `(user_id, streak_after)`. Read user by user rather than all at once: at a mass hold a
    /// run would otherwise hold every held user's hold (ten million at ten million users).
    package static func recordedSQL(_ user: String, when condition: String = "true") -> String {
        """
        SELECT string_agg(hl.streak_after::text || '|' || extract(epoch FROM hl.release_at)::text || '|'
                          || array_to_string(hl.gap_days, ','), ';') AS holds
        FROM sileme.held_alerts hl
        WHERE $holds_first::date IS NOT NULL AND \(condition) AND hl.user_id = \(user).id
          AND hl.streak_after BETWEEN $holds_first::date AND $holds_last::date
        """
    }

    /// The binds of `recordedSQL`'s range: none (nil) reads no holds.
    package static func binds(_ range: ClosedRange<CalendarDate>?) -> [String: String?] {
        ["holds_first": range?.lowerBound.description, "holds_last": range?.upperBound.description]
    }

    /// The holds of the row's `holds` column (`recordedSQL`), by `L'`; a part it cannot read is left out.
    package static func recorded(_ row: PGRow) -> [CalendarDate: IntakeGuard.Hold] {
        guard let text = row.string("holds") else { return [:] }
        var holds: [CalendarDate: IntakeGuard.Hold] = [:]
        for hold in text.split(separator: ";") {
            let fields = hold.split(separator: "|", omittingEmptySubsequences: false)
            guard fields.count == 3, let since = CalendarDate(parsing: fields[0]), let release = Double(fields[1]) else { continue }
            holds[since] = IntakeGuard.Hold(releaseAt: Date(timeIntervalSince1970: release),
                                            gapDays: fields[2].split(separator: ",").compactMap { CalendarDate(parsing: $0) })
        }
        return holds
    }

    /// A hold to record: the streak, and the gap days among its missed days.
    package struct NewHold: Sendable, Equatable {
        package let streak: Streak
        package let gapDays: [CalendarDate]

        /// Creates the value.
        package init(streak: Streak, gapDays: [CalendarDate]) {
            self.streak = streak
            self.gapDays = gapDays
        }
    }

    /// Records `holds` first planned on `runDate`, each ending `hours` from now; a streak already
    /// held keeps its first hold (a second run or a second daemon adds nothing). Returns when the
    /// earliest of the streaks' holds ends (nil when none is recorded).
    @discardableResult
    package static func record(_ db: PGConnection, _ holds: [NewHold], runDate: CalendarDate, hours: Double) throws -> Date? {
        guard !holds.isEmpty else { return nil }
        _ = try db.execute(SQLStatement("""
            INSERT INTO sileme.held_alerts (user_id, streak_after, run_date, gap_days, release_at)
            SELECT h.user_id::uuid, h.since::date, $run_date::date, string_to_array(h.gaps, ',')::date[],
                   now() + make_interval(secs => $seconds::double precision)
            FROM unnest($users::text[], $since::text[], $gaps::text[]) AS h(user_id, since, gaps)
            JOIN users u ON u.id = h.user_id::uuid
            ON CONFLICT (user_id, streak_after) DO NOTHING
            """), ["run_date": runDate.description, "seconds": String(hours * 3600),
                   "users": PGArray.literal(holds.map(\.streak.userID)),
                   "since": PGArray.literal(holds.map(\.streak.since.description)),
                   "gaps": PGArray.literal(holds.map { $0.gapDays.map(\.description).joined(separator: ",") })])
        let row = try db.execute(SQLStatement("""
            SELECT extract(epoch FROM min(release_at))::text AS release_at FROM sileme.held_alerts h
            JOIN unnest($users::text[], $since::text[]) AS s(user_id, since) ON h.user_id = s.user_id::uuid AND h.streak_after = s.since::date
            """), ["users": PGArray.literal(holds.map(\.streak.userID)), "since": PGArray.literal(holds.map(\.streak.since.description))])
        return row[0].string("release_at").flatMap(Double.init).map { Date(timeIntervalSince1970: $0) }
    }

    /// `release`: the open holds (of those first planned on `runDate`, or all) end now. Returns how many.
    package static func release(_ db: PGConnection, runDate: CalendarDate?, by who: String) throws -> Int {
        try db.execute(SQLStatement("""
            WITH released AS (
                UPDATE sileme.held_alerts SET release_at = now(), released_by = $who
                WHERE ended_at IS NULL AND release_at > now() AND ($run_date::date IS NULL OR run_date = $run_date::date)
                RETURNING 1)
            SELECT count(*)::text AS released FROM released
            """), ["who": who, "run_date": runDate?.description])[0].int("released") ?? 0
    }

    /// After runs of every user at `instant` completed: the holds over by then are ended, their
    /// alerts sent or handed to the retries (the daemon stops waking for them).
    package static func endHolds(_ db: PGConnection, over instant: Date) throws {
        _ = try db.execute(SQLStatement("""
            UPDATE sileme.held_alerts SET ended_at = now()
            WHERE ended_at IS NULL AND release_at <= to_timestamp($instant::double precision)
            """), ["instant": String(instant.timeIntervalSince1970)])
    }

    /// When the first hold not yet ended ends (`held_alerts_open_idx`: one index probe) — what
    /// the daemon asks every minute. A hold whose user has checked in since counts too: the run at
    /// its end sends nothing for it and ends it.
    package static func nextRelease(_ db: PGConnection) throws -> Date? {
        try db.execute("SELECT extract(epoch FROM min(release_at))::text AS release_at FROM sileme.held_alerts WHERE ended_at IS NULL")[0]
            .string("release_at").flatMap(Double.init).map { Date(timeIntervalSince1970: $0) }
    }

    /// The holds still open now: their count, when the first ends, and the gap days they were held
    /// for. A hold whose user has checked in since is not open (the late check-in ended the streak).
    package struct Open: Sendable, Equatable {
        package var count = 0
        package var nextRelease: Date?
        package var gapDays: [CalendarDate] = []

        /// Creates the value.
        package init(count: Int = 0, nextRelease: Date? = nil, gapDays: [CalendarDate] = []) {
            self.count = count
            self.nextRelease = nextRelease
            self.gapDays = gapDays
        }
    }

    /// The open holds (`held_alerts_open_idx`, then one summary probe each).
    package static func open(_ db: PGConnection) throws -> Open {
        let row = try db.execute("""
            SELECT count(*)::text AS held, extract(epoch FROM min(h.release_at))::text AS next_release,
                   (SELECT string_agg(d::text, ',' ORDER BY d) FROM (SELECT DISTINCT unnest(h2.gap_days) AS d
                        FROM sileme.held_alerts h2 WHERE h2.ended_at IS NULL) g) AS gap_days
            FROM sileme.held_alerts h
            JOIN sileme.user_last_check_in s ON s.user_id = h.user_id
            WHERE h.ended_at IS NULL AND s.last_check_in_date <= h.streak_after
            """)[0]
        let count = row.int("held") ?? 0
        return Open(count: count,
                    nextRelease: row.string("next_release").flatMap(Double.init).map { Date(timeIntervalSince1970: $0) },
                    gapDays: count == 0 ? [] : (row.string("gap_days") ?? "").split(separator: ",").compactMap { CalendarDate(parsing: $0) })
    }
}
