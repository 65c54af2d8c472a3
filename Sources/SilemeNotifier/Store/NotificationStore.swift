import Foundation

/// The daemon's SQL: the batch query, the runs table and the claim/send/record protocol of §4.
///
/// Stateless; every call takes the connection to use, so that each worker thread uses its own.
public struct NotificationStore: Sendable {
    /// Who claims rows, as written to `claimed_by` (`host:pid`).
    public let owner: String

    /// Creates a store that claims as `owner`.
    public init(owner: String) { self.owner = owner }

    // MARK: The batch query

    /// Streams every user whose latest check-in is before `runDate` and on or before
    /// `rule.latestQualifyingCheckIn(runDate:)` — one set-based statement for all users, results
    /// streamed row by row. It range-scans `user_last_check_in` (kept by a trigger on `check_ins`,
    /// migration 004) instead of aggregating the check-in history, so it costs what the listed
    /// users cost. `includeStale: false` leaves out users past the catch-up window (the real run
    /// only counts them, see `countStale`); the dry-run report lists them too.
    public func streamCandidates(_ db: PGConnection, runDate: CalendarDate, rule: MissRule, includeStale: Bool = true,
                                 _ body: (Candidate) throws -> Void) throws {
        let sql = """
            SELECT u.id::text, u.name, u.emergency_email, s.last_check_in_date,
                   EXISTS (SELECT 1 FROM notification_logs n
                           WHERE n.user_id = s.user_id AND n.notification_date > s.last_check_in_date AND n.email_sent)
            FROM user_last_check_in s
            JOIN users u ON u.id = s.user_id
            WHERE s.last_check_in_date <= $1::date AND s.last_check_in_date >= $2::date
            ORDER BY s.last_check_in_date DESC, s.user_id
            """
        let oldest = includeStale ? "-infinity" : oldestDue(runDate: runDate, rule: rule).description
        try db.stream(sql, [rule.latestQualifyingCheckIn(runDate: runDate).description, oldest]) { row in
            guard let id = row.string(0), let last = row.date(3) else { return }
            try body(Candidate(userID: id, rawName: row.string(1), rawEmail: row.string(2),
                               lastCheckIn: last, notifiedInStreak: row.bool(4)))
        }
    }

    /// The number of stale users on `runDate` (latest check-in before the catch-up window), from
    /// the index alone.
    public func countStale(_ db: PGConnection, runDate: CalendarDate, rule: MissRule) throws -> Int {
        try db.execute("SELECT count(*) FROM user_last_check_in WHERE last_check_in_date < $1::date",
                       [oldestDue(runDate: runDate, rule: rule).description])[0].int(0) ?? 0
    }

    /// The oldest `L` still due on `runDate`: `m = threshold + catchUp`.
    private func oldestDue(runDate: CalendarDate, rule: MissRule) -> CalendarDate {
        runDate.adding(days: -(rule.thresholdDays + rule.catchUpDays) - 1)
    }

    // MARK: Runs

    /// Inserts a `running` row in `notifier_runs` and returns its id.
    public func startRun(_ db: PGConnection, runDate: CalendarDate, mode: RunMode, host: String) throws -> Int64 {
        let row = try db.execute(
            "INSERT INTO notifier_runs (run_date, mode, host, pid) VALUES ($1, $2, $3, $4) RETURNING id",
            [runDate.description, mode.rawValue, host, String(ProcessInfo.processInfo.processIdentifier)])
        return Int64(row[0].string(0)!)!
    }

    /// Completes the run's row with its counts (status `completed`, or `failed` with `error`).
    public func finishRun(_ db: PGConnection, id: Int64, counts: RunCounts, error: String?) throws {
        try db.execute("""
            UPDATE notifier_runs SET finished_at = now(), status = $2, due = $3, sent = $4, failed = $5,
                   already_notified = $6, stale = $7, invalid_email = $8, invalid_name = $9,
                   busy_elsewhere = $10, error = $11
            WHERE id = $1
            """, [String(id), error == nil ? "completed" : "failed", String(counts.due), String(counts.sent),
                  String(counts.failed), String(counts.alreadyNotified), String(counts.stale),
                  String(counts.invalidEmail), String(counts.invalidName), String(counts.busyElsewhere), error])
    }

    // MARK: Claim, send, record

    /// Claims `(job.userID, runDate)` for sending: inserts the row, or takes over a row that may be
    /// (re)sent now — skipped earlier, a transient failure whose retry time has come, or a claim whose
    /// owner's database session is gone (a crashed run). Only the session whose statement wins
    /// gets a claim; everyone else gets nil. A taken-over row keeps its `Message-ID`.
    public func claim(_ db: PGConnection, job: DeliveryJob, runDate: CalendarDate, runID: Int64?,
                      newMessageID: String) throws -> Claim? {
        let result = try db.execute("""
            INSERT INTO notification_logs AS n
                (user_id, notification_date, email_sent, consecutive_miss_days, status, attempts, message_id,
                 claimed_by, claim_backend_pid, claimed_at, last_check_in_date, recipient_masked, run_id, updated_at)
            VALUES ($1::uuid, $2::date, false, $3, 'sending', 0, $4, $5, pg_backend_pid(), now(), $6::date, $7, $8, now())
            ON CONFLICT (user_id, notification_date) DO UPDATE
                SET status = 'sending', claimed_by = EXCLUDED.claimed_by,
                    claim_backend_pid = EXCLUDED.claim_backend_pid, claimed_at = now(),
                    consecutive_miss_days = EXCLUDED.consecutive_miss_days,
                    last_check_in_date = EXCLUDED.last_check_in_date,
                    recipient_masked = EXCLUDED.recipient_masked, run_id = EXCLUDED.run_id,
                    message_id = COALESCE(n.message_id, EXCLUDED.message_id), updated_at = now()
                WHERE NOT n.email_sent AND (
                    n.status = 'skipped'
                    OR (n.status = 'retry' AND (n.next_attempt_at IS NULL OR n.next_attempt_at <= now()))
                    OR (n.status = 'sending' AND NOT EXISTS (
                            SELECT 1 FROM pg_stat_activity a WHERE a.pid = n.claim_backend_pid)))
            RETURNING id, message_id, attempts, (xmax <> 0)
            """, [job.userID, runDate.description, String(job.missedDays), newMessageID, owner,
                  job.lastCheckIn.description, job.email.masked, runID.map(String.init)])
        guard result.count == 1, let id = Int64(result[0].string(0) ?? ""), let messageID = result[0].string(1) else {
            return nil
        }
        return Claim(logID: id, messageID: messageID, previousAttempts: result[0].int(2) ?? 0,
                     tookOver: result[0].bool(3))
    }

    /// Records a mail the server accepted: `email_sent = true`, `sent_at`, the server's reply.
    public func markSent(_ db: PGConnection, claim: Claim, attempts: Int, reply: String) throws {
        try db.execute("""
            UPDATE notification_logs SET status = 'sent', email_sent = true, sent_at = now(),
                   attempts = attempts + $2, last_error = NULL, next_attempt_at = NULL, updated_at = now(),
                   message_id = $3, last_reply = $4
            WHERE id = $1
            """, [String(claim.logID), String(attempts), claim.messageID, String(reply.prefix(1000))])
    }

    /// Records a failure: `retry` (transient, due again at `nextAttempt`) or `failed` (permanent).
    public func markFailed(_ db: PGConnection, claim: Claim, attempts: Int, permanent: Bool,
                           error: String, nextAttempt: Date?) throws {
        try db.execute("""
            UPDATE notification_logs SET status = $2, attempts = attempts + $3, last_error = $4, last_reply = $4,
                   next_attempt_at = to_timestamp($5::double precision), updated_at = now()
            WHERE id = $1 AND NOT email_sent
            """, [String(claim.logID), permanent ? "failed" : "retry", String(attempts), String(error.prefix(1000)),
                  nextAttempt.map { String($0.timeIntervalSince1970) }])
    }

    /// Records users skipped for bad data (one statement for all of them); a row that already
    /// exists for the day is left as it is.
    public func recordSkips(_ db: PGConnection, _ skips: [SkippedUser], runDate: CalendarDate, runID: Int64?) throws {
        guard !skips.isEmpty else { return }
        func array(_ values: [String]) -> String {
            "{" + values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
        }
        try db.execute("""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status,
                                           last_error, last_check_in_date, run_id, updated_at)
            SELECT s.user_id, $1::date, false, s.miss, 'skipped', s.reason, s.last, $2::bigint, now()
            FROM unnest($3::uuid[], $4::int[], $5::text[], $6::date[]) AS s(user_id, miss, reason, last)
            ON CONFLICT (user_id, notification_date) DO NOTHING
            """, [runDate.description, runID.map(String.init), array(skips.map(\.userID)),
                  array(skips.map { String($0.missedDays) }), array(skips.map(\.reason)),
                  array(skips.map(\.lastCheckIn.description))])
    }
}
