import Foundation
import Output
import Rule
import Store
import Values

/// The history report's SQL. Reads only. Aggregates are computed by PostgreSQL (GROUP BY) and the
/// listed rows are streamed (libpq single-row mode), so memory depends on the number of days,
/// not on the number of rows.
///
/// Stateless; every call takes the connection to use.
package struct HistoryStore {
    /// Text the report shows passes through this.
    package let redaction: HistoryRedaction
    /// Whether a claim is still in flight (`CLAIM_LEASE_SECONDS`).
    package let claims: ClaimSQL

    // MARK: Aggregates

    /// SQL: the user `userID` (an expression) is one of the users of the slots `$slots`, or
    /// `$slots` is NULL — the report of the users counted in one zone (`--zone`).
    static func inSlots(_ userID: String) -> String {
        "($slots::text[] IS NULL OR EXISTS (SELECT 1 FROM users z WHERE z.id = \(userID) AND \(SlotSQL.key("z")) = ANY($slots::text[])))"
    }

    /// SQL: a run of `notifier_runs` served some of the slots `$slots`, or everyone, or `$slots` is NULL.
    private static let servedSlots = "($slots::text[] IS NULL OR slots IS NULL OR slots && $slots::text[])"

    /// The counts per day (runs and `notification_logs` rows by delivery state), the skipped users
    /// per day and reason, and the distribution of `m` — for the whole period, or one user's rows;
    /// of the users of `slots` only when given (`--zone`), and the runs that served them.
    package func overview(_ db: PGConnection, request: HistoryRequest, slots: [String]? = nil,
                          intakeGuard: IntakeGuard = IntakeGuard(), today: CalendarDate = CalendarDate(Date(), in: TimeZone(identifier: "UTC")!),
                          timeZone: TimeZone = TimeZone(identifier: "UTC")!)
        throws -> HistoryOverview {
        let zone = SlotSQL.bind(slots)
        var days = request.days.map { DayCounts(date: $0) }
        let first = request.from
        func index(_ text: String?) -> Int? {
            guard let date = text.flatMap({ CalendarDate(parsing: $0) }) else { return nil }
            let i = date.days(since: first)
            return days.indices.contains(i) ? i : nil
        }
        // The period, one user (or everyone: nil) and the zone's slots (or every user: nil).
        let period: [String: String?] = ["from": request.from.description, "to": request.to.description]
        let scope = period.merging(["user_id": request.userID, "slots": zone]) { $1 }

        try db.stream(SQLStatement("""
            SELECT run_date::text AS day, count(*) AS runs, count(*) FILTER (WHERE status = 'completed') AS completed,
                   count(*) FILTER (WHERE status = 'failed') AS failed, count(*) FILTER (WHERE status = 'running') AS running
            FROM sileme.notifier_runs
            WHERE run_date BETWEEN $from::date AND $to::date AND \(Self.servedSlots)
            GROUP BY run_date
            """), period.merging(["slots": zone]) { $1 }) { row in
            guard let i = index(row.string("day")) else { return }
            days[i].runs = row.int("runs") ?? 0
            days[i].completedRuns = row.int("completed") ?? 0
            days[i].failedRuns = row.int("failed") ?? 0
            days[i].runningRuns = row.int("running") ?? 0
        }

        // One scan of the period's rows, grouped by day, state, skip reason and m; folded here into
        // the per-day counts, the skip reasons and the distribution of m.
        var skips: [Int: [String: Int]] = [:]
        var missDays: [Int: MissDaysCount] = [:]
        try db.stream(SQLStatement("""
            SELECT n.notification_date::text AS day, n.status, coalesce(n.email_sent, false) AS email_sent,
                   CASE WHEN n.status = 'skipped' THEN coalesce(n.last_error, '') END AS skip_reason,
                   n.consecutive_miss_days, count(*) AS rows
            FROM notification_logs n
            WHERE n.notification_date BETWEEN $from::date AND $to::date AND ($user_id::uuid IS NULL OR n.user_id = $user_id::uuid)
              AND \(Self.inSlots("n.user_id"))
            GROUP BY n.notification_date, n.status, coalesce(n.email_sent, false),
                     CASE WHEN n.status = 'skipped' THEN coalesce(n.last_error, '') END, n.consecutive_miss_days
            """), scope) { row in
            guard let i = index(row.string("day")) else { return }
            let sent = row.bool("email_sent")
            let count = row.int("rows") ?? 0
            switch row.string("status") {
            case "sent"?: days[i].sent += count
            case "failed"?: days[i].failed += count
            case "bounced"?: days[i].bounced += count
            case "retry"?: days[i].retryPending += count
            case "sending"?: days[i].sending += count
            case "skipped"?:
                days[i].skipped += count
                skips[i, default: [:]][redaction.text(row.string("skip_reason")) ?? "", default: 0] += count
            case nil:
                if sent { days[i].legacySent += count; days[i].sent += count } else { days[i].legacyNotSent += count }
            default:
                break  // a status this version does not know: not counted rather than guessed
            }
            let m = row.int("consecutive_miss_days") ?? 0
            var bucket = missDays[m] ?? MissDaysCount(missedDays: m, sent: 0, notSent: 0)
            if sent { bucket.sent += count } else { bucket.notSent += count }
            missDays[m] = bucket
        }
        let skipList = skips.keys.sorted().flatMap { i in
            skips[i]!.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
                .map { SkipCount(date: days[i].date, reason: $0.key, count: $0.value) }
        }
        var overview = HistoryOverview(days: days, skips: skipList, missDays: missDays.keys.sorted().map { missDays[$0]! })
        overview.byKind = try db.execute(SQLStatement("""
            SELECT kind, channel, count(*) FILTER (WHERE email_sent AND status IS DISTINCT FROM 'bounced') AS sent,
                   count(*) FILTER (WHERE status = 'failed') AS failed, count(*) FILTER (WHERE status IN ('retry', 'sending')) AS pending,
                   count(*) FILTER (WHERE status = 'bounced') AS bounced
            FROM notification_logs n
            WHERE notification_date BETWEEN $from::date AND $to::date AND ($user_id::uuid IS NULL OR user_id = $user_id::uuid)
              AND \(Self.inSlots("n.user_id"))
            GROUP BY kind, channel ORDER BY channel, kind
            """), scope).rows.map {
            HistoryOverview.KindCount(kind: $0.string("kind") ?? "", channel: $0.string("channel") ?? "", sent: $0.int("sent") ?? 0,
                                      failed: $0.int("failed") ?? 0, pending: $0.int("pending") ?? 0, bounced: $0.int("bounced") ?? 0)
        }
        overview.byChannel = Dictionary(grouping: overview.byKind, by: \.channel).sorted { $0.key < $1.key }.map { channel, counts in
            HistoryOverview.KindCount(kind: "", channel: channel, sent: counts.map(\.sent).reduce(0, +),
                                      failed: counts.map(\.failed).reduce(0, +), pending: counts.map(\.pending).reduce(0, +),
                                      bounced: counts.map(\.bounced).reduce(0, +))
        }
        overview.undeliverable = try db.execute(SQLStatement("""
            SELECT s.user_id::text AS user_id, s.email, coalesce(s.last_reply, '') AS last_reply, extract(epoch FROM s.updated_at) AS since
            FROM contact_status s
            WHERE s.status = 'undeliverable' AND ($user_id::uuid IS NULL OR s.user_id = $user_id::uuid)
              AND EXISTS (SELECT 1 FROM notification_logs n WHERE n.user_id = s.user_id
                          AND n.notification_date BETWEEN $from::date AND $to::date)
              AND \(Self.inSlots("s.user_id"))
            ORDER BY s.updated_at DESC, s.user_id, s.email
            LIMIT 1000
            """), scope).rows.map {
            HistoryOverview.UndeliverableContact(userID: $0.string("user_id") ?? "", email: redaction.email($0.string("email")) ?? "",
                                                 lastReply: redaction.text($0.string("last_reply")) ?? "",
                                                 since: Self.instant($0, "since") ?? Date(timeIntervalSince1970: 0))
        }
        overview.intakeGaps = try intakeGaps(db, request: request, guard: intakeGuard, today: today, serviceZone: timeZone)
        (overview.bouncesByDay, overview.bouncesByDomain) = try bounces(db, scope: scope, timeZone: timeZone)
        // The canaries are the service's, not a user's: only in a report of the whole service.
        if request.userID == nil && slots == nil {
            overview.canaries = try CanaryStore.figures(db, from: request.from.description, to: request.to.description, zone: timeZone.identifier)
        }
        overview.acknowledgements = try db.execute(SQLStatement("""
            SELECT count(*) AS acknowledgements FROM sileme.acknowledgements k
            WHERE k.alert_date BETWEEN $from::date AND $to::date AND ($user_id::uuid IS NULL OR k.user_id = $user_id::uuid)
              AND \(Self.inSlots("k.user_id"))
            """), scope)[0].int("acknowledgements") ?? 0
        overview.escalation = try escalation(db, request: request, scope: scope)
        return overview
    }

    /// The bounce reports read in the period (`scope`'s days, in `timeZone`), per day and per
    /// recipient domain (docs/bounces.md), the permanent ones by class. A report of one user or
    /// zone counts the reports about its users' mails (an unmatched report is about no one's). A
    /// permanent report read before migration 032 has no class stored: it is classed by its
    /// status code alone. One range read of the reports' time index.
    private func bounces(_ db: PGConnection, scope: [String: String?], timeZone: TimeZone)
        throws -> (byDay: [HistoryOverview.BounceCount], byDomain: [HistoryOverview.BounceCount]) {
        var byDay: [String: HistoryOverview.BounceCount] = [:], byDomain: [String: HistoryOverview.BounceCount] = [:]
        try db.stream(SQLStatement("""
            SELECT (e.received_at AT TIME ZONE $zone)::date::text AS day, e.domain, e.kind, e.bounce_class,
                   CASE WHEN e.kind = 'permanent' AND e.bounce_class IS NULL THEN e.status_code END AS unclassed_status,
                   count(*) AS reports
            FROM sileme.bounce_events e
            LEFT JOIN notification_logs n ON n.id = e.log_id
            WHERE e.received_at >= ($from::date::timestamp AT TIME ZONE $zone)
              AND e.received_at < (($to::date + 1)::timestamp AT TIME ZONE $zone)
              AND (($user_id::uuid IS NULL AND $slots::text[] IS NULL)
                   OR (n.user_id IS NOT NULL AND ($user_id::uuid IS NULL OR n.user_id = $user_id::uuid) AND \(Self.inSlots("n.user_id"))))
            GROUP BY 1, 2, 3, 4, 5
            """), scope.merging(["zone": timeZone.identifier]) { $1 }) { row in
            let day = row.string("day") ?? "", domain = redaction.plain(row.string("domain")) ?? "", kind = row.string("kind") ?? ""
            let count = row.int("reports") ?? 0
            let bounceClass = row.string("bounce_class").flatMap(BounceClass.init(rawValue:))
                ?? row.string("unclassed_status").map { BounceClass.of(status: $0, text: nil) }
            byDay[day, default: .init(key: day)].add(kind: kind, bounceClass: bounceClass, count)
            byDomain[domain, default: .init(key: domain)].add(kind: kind, bounceClass: bounceClass, count)
        }
        let days = byDay.values.sorted { $0.key < $1.key }
        let domains = byDomain.values.sorted { ($0.total, $1.key) > ($1.total, $0.key) }.prefix(100)
        return (days, Array(domains))
    }

    /// The period's intake gaps as the guard judges them now (the intake of each day as received
    /// so far), with the users held over each — of the whole service, for a report of one user or
    /// zone too: a gap is the app's, not a user's. Days from `today` on are still taking check-ins
    /// and are not judged; an earlier day still running in some users' zones is judged over the
    /// others (`IntakeGuard.Intake`), and its intake and usual are theirs.
    private func intakeGaps(_ db: PGConnection, request: HistoryRequest, guard intakeGuard: IntakeGuard,
                            today: CalendarDate, serviceZone: TimeZone) throws -> [HistoryOverview.IntakeGap] {
        guard request.from < today else { return [] }
        let period = request.from...min(request.to, today.adding(days: -1))
        let intake = try HoldStore.intake(db, days: IntakeGuard.window(for: period), serviceZone: serviceZone)
        let gaps = intakeGuard.gaps(in: period, intake: intake)
        guard !gaps.isEmpty else { return [] }
        var held: [CalendarDate: Int] = [:]
        for row in try db.execute(SQLStatement("""
            SELECT d::text AS day, count(*)::text AS held FROM sileme.held_alerts h CROSS JOIN LATERAL unnest(h.gap_days) d
            WHERE d BETWEEN $first::date AND $last::date GROUP BY d
            """), ["first": period.lowerBound.description, "last": period.upperBound.description]).rows {
            if let day = row.date("day") { held[day] = row.int("held") ?? 0 }
        }
        return gaps.map { day in
            let judged = intake.judged(day)
            return HistoryOverview.IntakeGap(date: day, intake: judged.intake, median: judged.median, held: held[day] ?? 0)
        }
    }

    // MARK: Runs

    /// Streams the period's runs, by run date and start (those that served `slots`, when given).
    package func streamRuns(_ db: PGConnection, request: HistoryRequest, slots: [String]? = nil,
                            _ body: (RunRecord) throws -> Void) throws {
        let listed = RunRecord.listedFields
        try db.stream(SQLStatement("""
            SELECT id, run_date::text AS run_date, mode, host, extract(epoch FROM started_at) AS started, extract(epoch FROM finished_at) AS finished,
                   status, error, \(listed.compactMap(\.column).joined(separator: ", "))
            FROM sileme.notifier_runs
            WHERE run_date BETWEEN $from::date AND $to::date AND \(Self.servedSlots)
            ORDER BY run_date, started_at, id
            """), ["from": request.from.description, "to": request.to.description, "slots": SlotSQL.bind(slots)]) { row in
            guard let id = row.string("id").flatMap({ Int64($0) }), let date = row.date("run_date") else { return }
            var counts: [String: Int] = [:]
            for field in listed { counts[field.name] = field.column.flatMap { row.int($0) } }
            try body(RunRecord(
                id: id, runDate: date, mode: redaction.plain(row.string("mode")) ?? "", host: redaction.plain(row.string("host")) ?? "",
                startedAt: Self.instant(row, "started"), finishedAt: Self.instant(row, "finished"),
                status: row.string("status") ?? "", error: redaction.text(row.string("error")), counts: counts))
        }
    }

    // MARK: Notification rows

    /// The columns `record(_:)` reads, from `notification_logs n` and `users u`; whether a claim is
    /// still in flight is the claim's own test (`ClaimSQL`).
    /// Dates come as day numbers (days since 1970-01-01, what `CalendarDate` counts in), instants as
    /// epoch seconds: no text to parse per row.
    private var recordColumns: String { """
        n.notification_date - DATE '1970-01-01' AS notification_day, n.status, coalesce(n.email_sent, false) AS email_sent,
        n.user_id::text AS user_id, u.name, u.emergency_email, n.recipient_masked, n.consecutive_miss_days,
        n.last_check_in_date - DATE '1970-01-01' AS last_check_in_day, n.attempts, n.message_id,
        extract(epoch FROM n.sent_at) AS sent_at, extract(epoch FROM n.next_attempt_at) AS next_attempt_at,
        extract(epoch FROM n.claimed_at) AS claimed_at, n.claimed_by, \(claims.inFlight("n")) AS claim_alive,
        coalesce(n.last_error, n.last_reply) AS detail
        """ }

    /// The join `recordColumns` needs.
    private static let recordJoins = "LEFT JOIN users u ON u.id = n.user_id"

    /// Streams the period's failed, stuck/sending and retrying rows: by day, failed first, then
    /// sending, then retry, then user. With a limit, at most that many per day. Of the users of
    /// `slots` only, when given.
    package func streamProblems(_ db: PGConnection, request: HistoryRequest, slots: [String]? = nil,
                                _ body: (NotificationRecord) throws -> Void) throws {
        try db.stream(SQLStatement("""
            SELECT * FROM (
                SELECT \(recordColumns), n.notification_date AS day, n.user_id AS uid,
                       CASE n.status WHEN 'failed' THEN 0 WHEN 'sending' THEN 1 ELSE 2 END AS sort,
                       row_number() OVER (PARTITION BY n.notification_date
                                          ORDER BY CASE n.status WHEN 'failed' THEN 0 WHEN 'sending' THEN 1 ELSE 2 END,
                                                   n.user_id) AS rank
                FROM notification_logs n
                \(Self.recordJoins)
                WHERE n.notification_date BETWEEN $from::date AND $to::date AND n.status IN ('failed', 'sending', 'retry')
                  AND \(Self.inSlots("n.user_id"))
            ) p
            WHERE $limit_per_day::bigint IS NULL OR p.rank <= $limit_per_day::bigint
            ORDER BY p.day, p.sort, p.uid
            """), ["from": request.from.description, "to": request.to.description,
                   "limit_per_day": request.problemLimitPerDay.map(String.init), "slots": SlotSQL.bind(slots)]) { row in
            if let record = record(row) { try body(record) }
        }
    }

    /// Streams every row of `userID` in the period, by date.
    package func streamNotifications(_ db: PGConnection, userID: String, request: HistoryRequest,
                             _ body: (NotificationRecord) throws -> Void) throws {
        try db.stream(SQLStatement("""
            SELECT \(recordColumns)
            FROM notification_logs n
            \(Self.recordJoins)
            WHERE n.user_id = $user_id::uuid AND n.notification_date BETWEEN $from::date AND $to::date
            ORDER BY n.notification_date
            """), ["user_id": userID, "from": request.from.description, "to": request.to.description]) { row in
            if let record = record(row) { try body(record) }
        }
    }

    private func record(_ row: PGRow) -> NotificationRecord? {
        guard let date = Self.day(row, "notification_day"), let userID = row.string("user_id") else { return nil }
        return NotificationRecord(
            date: date, status: row.string("status"), emailSent: row.bool("email_sent"), userID: userID,
            name: redaction.text(row.string("name")), recipient: redaction.text(row.string("recipient_masked")),
            contactEmail: redaction.email(row.string("emergency_email")), missedDays: row.int("consecutive_miss_days") ?? 0,
            lastCheckIn: Self.day(row, "last_check_in_day"), attempts: row.int("attempts") ?? 0,
            messageID: redaction.plain(row.string("message_id")), sentAt: Self.instant(row, "sent_at"),
            nextAttemptAt: Self.instant(row, "next_attempt_at"), claimedAt: Self.instant(row, "claimed_at"),
            claimedBy: redaction.plain(row.string("claimed_by")), claimAlive: row.bool("claim_alive"),
            detail: redaction.text(row.string("detail")))
    }

    // MARK: One user

    /// The user as the `users` table has them now; nil when there is no such user.
    package func user(_ db: PGConnection, id: String) throws -> UserProfile? {
        let result = try db.execute(SQLStatement("SELECT id::text AS id, name, emergency_email FROM users WHERE id = $id::uuid"), ["id": id])
        guard result.count == 1, let userID = result[0].string("id") else { return nil }
        return UserProfile(userID: userID, name: redaction.text(result[0].string("name")) ?? "",
                           contactEmail: redaction.email(result[0].string("emergency_email")) ?? "")
    }

    /// Streams the user's streaks that touch the period: a streak runs from a check-in `L` to the
    /// next check-in `N` (window function over the user's check-ins); it is listed when its missed
    /// days (`L+1 … N−1`) or its notification rows (`L < date ≤ N`) fall in the period, and it
    /// missed at least one day or has a row. Its rows are looked up through the claim key's index.
    /// Check-ins dated after the day after the report's last day are ignored, as the rule ignores
    /// them (a wrong device clock: they neither end a streak nor start one); the user's
    /// `paused_until` and a `superseded` row judge the streak as the rule did.
    package func streamStreaks(_ db: PGConnection, userID: String, request: HistoryRequest, rule: MissRule,
                       _ body: (Streak) throws -> Void) throws {
        try db.stream(SQLStatement("""
            WITH c AS (
                SELECT check_in_date AS l, lead(check_in_date) OVER (ORDER BY check_in_date) AS n
                FROM check_ins WHERE user_id = $user_id::uuid AND check_in_date <= $to::date + 1
            )
            SELECT c.l::text AS last_check_in, c.n::text AS next_check_in, s.notification_date::text AS notified_on,
                   extract(epoch FROM s.sent_at) AS sent_at, s.consecutive_miss_days, s.message_id, r.rows, r.last_status,
                   r.last_error, (SELECT paused_until::text FROM users WHERE id = $user_id::uuid) AS paused_until
            FROM c
            LEFT JOIN LATERAL (
                SELECT x.notification_date, x.sent_at, x.consecutive_miss_days, x.message_id
                FROM notification_logs x
                WHERE x.user_id = $user_id::uuid AND x.notification_date > c.l
                  AND (c.n IS NULL OR x.notification_date <= c.n) AND x.email_sent
                ORDER BY x.notification_date LIMIT 1) s ON true
            CROSS JOIN LATERAL (
                SELECT count(*) AS rows,
                       (array_agg(x.status ORDER BY x.notification_date DESC))[1] AS last_status,
                       (array_agg(coalesce(x.last_error, x.last_reply) ORDER BY x.notification_date DESC))[1] AS last_error
                FROM notification_logs x
                WHERE x.user_id = $user_id::uuid AND x.notification_date > c.l
                  AND (c.n IS NULL OR x.notification_date <= c.n)) r
            WHERE c.l < $to::date AND (c.n IS NULL OR c.n >= $from::date)
              AND (coalesce(c.n, $to::date + 1) - c.l - 1 >= 1 OR r.rows > 0)
            ORDER BY c.l
            """), ["user_id": userID, "from": request.from.description, "to": request.to.description]) { row in
            guard let last = row.date("last_check_in") else { return }
            let next = row.date("next_check_in")
            let notifiedOn = row.date("notified_on")
            let rows = row.int("rows") ?? 0
            let missed = rule.missedDays(lastCheckIn: last, runDate: next ?? request.to.adding(days: 1))
            let superseded = row.string("last_status") == "skipped" && (row.string("last_error") ?? "").hasPrefix(Decision.superseded.rawValue + ":")
            try body(Streak(
                lastCheckIn: last, nextCheckIn: next, missedDays: missed, notifiedOn: notifiedOn,
                sentAt: Self.instant(row, "sent_at"), notifiedMissedDays: row.int("consecutive_miss_days"),
                messageID: redaction.plain(row.string("message_id")),
                rows: rows, lastStatus: notifiedOn == nil ? row.string("last_status") : nil,
                lastError: notifiedOn == nil ? redaction.text(row.string("last_error")) : nil,
                outcome: Streak.outcome(lastCheckIn: last, nextCheckIn: next, reportEnd: request.to,
                                        notified: notifiedOn != nil, rows: rows, rule: rule,
                                        superseded: superseded, pausedUntil: row.date("paused_until"))))
        }
    }

    /// The column named `column` (days since 1970-01-01) as a date.
    private static func day(_ row: PGRow, _ column: String) -> CalendarDate? { row.int(column).map(CalendarDate.init(dayNumber:)) }

    /// The column named `column` (epoch seconds) as an instant.
    private static func instant(_ row: PGRow, _ column: String) -> Date? {
        row.string(column).flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0) }
    }
}
