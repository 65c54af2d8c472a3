import Foundation
import Rule
import Values

/// The daemon's SQL: the batch query, the runs table and the claim/send/record protocol of docs/delivery.md.
///
/// Stateless; every call takes the connection to use, so that each worker thread uses its own.
public struct NotificationStore: Sendable {
    /// Who claims rows, as written to `claimed_by` (`host:pid`).
    public let owner: String
    /// When a claim may be taken over (`CLAIM_LEASE_SECONDS`).
    package let claimSQL: ClaimSQL

    /// Creates a store that claims as `owner`, with claims through a pooler leased for `claimLeaseSeconds`.
    public init(owner: String, claimLeaseSeconds: Double) {
        self.owner = owner
        claimSQL = ClaimSQL(leaseSeconds: claimLeaseSeconds)
    }

    // MARK: The batch query

    /// Streams every user whose latest check-in is before `runDate` and on or before
    /// `rule.latestQualifyingCheckIn(runDate:)` — one set-based statement for all users, results
    /// streamed row by row. It range-scans `user_last_check_in` (kept by triggers on `check_ins`
    /// and `notification_logs`, migrations 004 and 005) instead of aggregating the check-in
    /// history, so it costs what the listed users cost: "once per streak" is the comparison of the
    /// latest accepted notification with `L`. `includeStale: false` leaves out users past the catch-up window (the real run
    /// only counts them, see `countStale`); the dry-run report lists them too.
    public func streamCandidates(_ db: PGConnection, runDate: CalendarDate, rule: MissRule, includeStale: Bool = true,
                                 _ body: (Candidate) throws -> Void) throws {
        let sql = """
            SELECT u.id::text, u.name, u.emergency_email, s.last_check_in_date,
                   coalesce(s.last_notified_date > s.last_check_in_date, false)
            FROM user_last_check_in s
            -- One primary-key probe per listed user (OFFSET 0 keeps the planner from turning this
            -- into a hash join that scans every user): the cost follows the listed users only.
            CROSS JOIN LATERAL (SELECT id, name, emergency_email FROM users WHERE users.id = s.user_id OFFSET 0) u
            WHERE s.last_check_in_date <= $1::date AND s.last_check_in_date >= $2::date
            ORDER BY s.last_check_in_date DESC, s.user_id
            """
        let oldest = includeStale ? "-infinity" : rule.oldestDueCheckIn(runDate: runDate).description
        try db.stream(sql, [rule.latestQualifyingCheckIn(runDate: runDate).description, oldest]) { row in
            guard let id = row.string(0), let last = row.date(3) else { return }
            try body(Candidate(userID: id, rawName: row.string(1), rawEmail: row.string(2),
                               lastCheckIn: last, notifiedInStreak: row.bool(4)))
        }
    }

    /// The shared decision code of the real run, the dry run and `retry`: streams the candidates
    /// of the batch query through `rule` and hands every user the report lists (`m ≥ threshold`)
    /// to `body` — only `onlyUsers` when given. With `includeStale: false` (the real run) stale
    /// users are not streamed; the caller counts them with `countStale`.
    public func evaluate(_ db: PGConnection, runDate: CalendarDate, rule: MissRule, includeStale: Bool = true,
                         onlyUsers: Set<String>? = nil, _ body: (Candidate, Evaluation) throws -> Void) throws {
        try streamCandidates(db, runDate: runDate, rule: rule, includeStale: includeStale) { candidate in
            if let onlyUsers, !onlyUsers.contains(candidate.userID) { return }
            if let evaluation = rule.evaluate(candidate, runDate: runDate) { try body(candidate, evaluation) }
        }
    }

    /// The number of stale users on `runDate` (latest check-in before the catch-up window), from
    /// the index alone.
    public func countStale(_ db: PGConnection, runDate: CalendarDate, rule: MissRule) throws -> Int {
        try db.execute("SELECT count(*) FROM user_last_check_in WHERE last_check_in_date < $1::date",
                       [rule.oldestDueCheckIn(runDate: runDate).description])[0].int(0) ?? 0
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
                   busy_elsewhere = $10, error = $11, gone = $12, claim_errors = $13
            WHERE id = $1
            """, [String(id), error == nil ? "completed" : "failed", String(counts.due), String(counts.sent),
                  String(counts.failed), String(counts.alreadyNotified), String(counts.stale),
                  String(counts.invalidEmail), String(counts.invalidName), String(counts.busyElsewhere), error,
                  String(counts.gone), String(counts.claimErrors)])
    }

    // MARK: Claim, send, record

    /// What one claim statement came to: the claims this session won, by user id, and the users
    /// no longer in `users` (deleted since the evaluation), who get no row and no mail. Jobs in
    /// neither are someone else's (a live claim, or a retry whose time has not come).
    public struct ClaimResult: Sendable {
        /// The claims won, by user id.
        public var claims: [String: Claim] = [:]
        /// Users deleted (or otherwise gone) since the evaluation.
        public var gone: Set<String> = []

        /// An empty result.
        public init() {}
    }

    /// Claims `(user, runDate)` for each job, in one statement: inserts the rows, or takes over
    /// rows that may be (re)sent now — skipped earlier, a transient failure whose retry time has
    /// come, this store's own earlier claim (a statement repeated after a broken connection), or
    /// an abandoned claim (`ClaimSQL`). Only the session whose statement wins a row gets its
    /// claim. A taken-over row keeps its `Message-ID`.
    ///
    /// A user the app deleted since the evaluation is left out and returned as gone — never a
    /// foreign-key error that would stop the run: the statement leaves out users its snapshot no
    /// longer has, and should a deletion commit between its snapshot and its foreign-key check
    /// (23503), it runs again with a new snapshot (`againAfterDeletion`). (Locking the users rows
    /// instead would need UPDATE rights on the app's table.) The session's backend pid is recorded only on a direct
    /// connection (`PGConnection.isDirect`); through a pooler the claim holds a lease.
    public func claim(_ db: PGConnection, jobs: [DeliveryJob], runDate: CalendarDate, runID: Int64?,
                      newMessageIDs: [String]) throws -> ClaimResult {
        guard !jobs.isEmpty else { return ClaimResult() }
        let result = try Self.againAfterDeletion { try db.execute("""
            WITH j AS (
                SELECT * FROM unnest($4::uuid[], $5::int[], $6::text[], $7::date[], $8::text[]) AS j(user_id, miss, message_id, last, masked)
            ), live AS (
                SELECT j.* FROM j WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = j.user_id)
            ), claimed AS (
                INSERT INTO notification_logs AS n
                    (user_id, notification_date, email_sent, consecutive_miss_days, status, attempts, message_id,
                     claimed_by, claim_backend_pid, claimed_at, last_check_in_date, recipient_masked, run_id, updated_at)
                SELECT live.user_id, $1::date, false, live.miss, 'sending', 0, live.message_id, $2,
                       CASE WHEN $9::boolean THEN pg_backend_pid() END, now(), live.last, live.masked, $3::bigint, now()
                FROM live
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
                        OR (n.status = 'sending' AND n.claimed_by = EXCLUDED.claimed_by)
                        OR \(claimSQL.abandoned("n")))
                RETURNING n.user_id, n.id, n.message_id, n.attempts, (n.xmax <> 0) AS took_over
            )
            SELECT user_id::text, id, message_id, attempts, took_over FROM claimed
            UNION ALL
            SELECT j.user_id::text, NULL, NULL, NULL, NULL FROM j WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.user_id = j.user_id)
            """, [runDate.description, owner, runID.map(String.init),
                  PGArray.literal(jobs.map(\.userID)), PGArray.literal(jobs.map { String($0.missedDays) }),
                  PGArray.literal(newMessageIDs), PGArray.literal(jobs.map(\.lastCheckIn.description)),
                  PGArray.literal(jobs.map(\.email.masked)), String(try db.isDirect)]) }
        var outcome = ClaimResult()
        for row in result.rows {
            guard let user = row.string(0) else { continue }
            guard let id = Int64(row.string(1) ?? ""), let messageID = row.string(2) else {
                outcome.gone.insert(user)
                continue
            }
            outcome.claims[user] = Claim(logID: id, messageID: messageID, previousAttempts: row.int(3) ?? 0, tookOver: row.bool(4))
        }
        return outcome
    }

    /// Renews the lease of this store's claims of `runDate` that are still being sent (the
    /// recorder calls it every quarter of `CLAIM_LEASE_SECONDS`), so a long send through a pooler
    /// is never taken for a crashed one.
    public func renewClaims(_ db: PGConnection, runDate: CalendarDate) throws {
        try db.execute("""
            UPDATE notification_logs SET claimed_at = now()
            WHERE claimed_by = $1 AND status = 'sending' AND notification_date = $2::date
            """, [owner, runDate.description])
    }

    /// Records outcomes in at most two statements: accepted mails (`email_sent = true`, `sent_at`,
    /// the server's reply) and failures (`retry` with `next_attempt_at`, or `failed`). Idempotent:
    /// writing the same outcomes again (after a broken connection) leaves sent rows and rows no
    /// longer `sending` alone.
    public func record(_ db: PGConnection, _ outcomes: [RecordedOutcome]) throws {
        let sent = outcomes.filter { $0.status == .sent }
        if !sent.isEmpty {
            try db.execute("""
                UPDATE notification_logs n SET status = 'sent', email_sent = true, sent_at = to_timestamp(r.at_epoch),
                       attempts = n.attempts + r.attempts, last_error = NULL, next_attempt_at = NULL,
                       last_reply = r.reply, updated_at = now()
                FROM unnest($1::bigint[], $2::int[], $3::text[], $4::float8[]) AS r(id, attempts, reply, at_epoch)
                WHERE n.id = r.id AND NOT n.email_sent
                """, [PGArray.literal(sent.map { String($0.logID) }), PGArray.literal(sent.map { String($0.attempts) }),
                      PGArray.literal(sent.map { String($0.text.prefix(1000)) }),
                      PGArray.literal(sent.map { String($0.at.timeIntervalSince1970) })])
        }
        let failed = outcomes.filter { $0.status != .sent }
        if !failed.isEmpty {
            try db.execute("""
                UPDATE notification_logs n SET status = r.status, attempts = n.attempts + r.attempts,
                       last_error = r.error, last_reply = r.error, next_attempt_at = to_timestamp(r.next_epoch),
                       updated_at = now()
                FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::float8[]) AS r(id, status, attempts, error, next_epoch)
                WHERE n.id = r.id AND NOT n.email_sent AND n.status = 'sending'
                """, [PGArray.literal(failed.map { String($0.logID) }), PGArray.literal(failed.map(\.status.rawValue)),
                      PGArray.literal(failed.map { String($0.attempts) }), PGArray.literal(failed.map { String($0.text.prefix(1000)) }),
                      PGArray.literal(failed.map { $0.nextAttempt.map { String($0.timeIntervalSince1970) } })])
        }
    }

    /// One user as the rule sees them on `runDate` (for `--preview`), whether or not they are due:
    /// nil when there is no such user; `lastCheckIn` nil when they never checked in before `runDate`.
    public func user(_ db: PGConnection, id: String, runDate: CalendarDate)
        throws -> (candidate: Candidate?, checkedInSince: Bool, name: String?, email: String?)? {
        let result = try db.execute("""
            SELECT u.id::text, u.name, u.emergency_email, l.last,
                   EXISTS (SELECT 1 FROM check_ins c WHERE c.user_id = u.id AND c.check_in_date >= $2::date),
                   EXISTS (SELECT 1 FROM notification_logs n WHERE n.user_id = u.id AND n.notification_date > l.last AND n.email_sent)
            FROM users u
            CROSS JOIN LATERAL (SELECT max(check_in_date) AS last FROM check_ins c
                                WHERE c.user_id = u.id AND c.check_in_date < $2::date) l
            WHERE u.id::text = $1
            """, [id.lowercased(), runDate.description])
        guard result.count == 1 else { return nil }
        let row = result[0]
        let candidate = row.date(3).map {
            Candidate(userID: row.string(0)!, rawName: row.string(1), rawEmail: row.string(2), lastCheckIn: $0, notifiedInStreak: row.bool(5))
        }
        return (candidate, row.bool(4), row.string(1), row.string(2))
    }

    /// The rows of `runDate` that the `retry` command re-attempts: permanent and transient failures
    /// and claims whose process died — of one user, or of everyone.
    public func retryTargets(_ db: PGConnection, runDate: CalendarDate, userID: String?) throws -> [RetryTarget] {
        try db.execute("""
            SELECT n.user_id::text, n.status, n.attempts, n.last_error, n.recipient_masked
            FROM notification_logs n
            WHERE n.notification_date = $1::date AND NOT n.email_sent AND ($2::uuid IS NULL OR n.user_id = $2::uuid)
              AND (n.status IN ('failed', 'retry')
                   OR \(claimSQL.abandoned("n")))
            ORDER BY n.user_id
            """, [runDate.description, userID]).rows.compactMap { row in
                row.string(0).map { RetryTarget(userID: $0, status: row.string(1) ?? "", attempts: row.int(2) ?? 0,
                                                lastError: row.string(3), recipient: row.string(4)) }
            }
    }

    /// Makes failed rows of `userIDs` on `runDate` claimable now (`retry`, due immediately).
    public func releaseForRetry(_ db: PGConnection, userIDs: [String], runDate: CalendarDate) throws {
        guard !userIDs.isEmpty else { return }
        try db.execute("""
            UPDATE notification_logs SET status = 'retry', next_attempt_at = now(), updated_at = now()
            WHERE notification_date = $1::date AND user_id = ANY($2::uuid[]) AND NOT email_sent
              AND status IN ('failed', 'retry')
            """, [runDate.description, PGArray.literal(userIDs)])
    }

    /// Records users skipped for bad data (one statement for all of them); a row that already
    /// exists for the day is left as it is, and a user deleted meanwhile is left out.
    public func recordSkips(_ db: PGConnection, _ skips: [SkippedUser], runDate: CalendarDate, runID: Int64?) throws {
        guard !skips.isEmpty else { return }
        _ = try Self.againAfterDeletion { try db.execute("""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status,
                                           last_error, last_check_in_date, run_id, updated_at)
            SELECT s.user_id, $1::date, false, s.miss, 'skipped', s.reason, s.last, $2::bigint, now()
            FROM unnest($3::uuid[], $4::int[], $5::text[], $6::date[]) AS s(user_id, miss, reason, last)
            WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id)  -- deleted since the evaluation: no row
            ON CONFLICT (user_id, notification_date) DO NOTHING
            """, [runDate.description, runID.map(String.init), PGArray.literal(skips.map(\.userID)),
                  PGArray.literal(skips.map { String($0.missedDays) }), PGArray.literal(skips.map(\.reason)),
                  PGArray.literal(skips.map(\.lastCheckIn.description))]) }
    }

    /// Runs `statement` (an insert that leaves out users its snapshot no longer has) again when a
    /// user it inserts for was deleted between its snapshot and its foreign-key check (23503): the
    /// next snapshot leaves that user out. A few times at most; then the error stands.
    private static func againAfterDeletion<T>(_ statement: () throws -> T) throws -> T {
        for _ in 1..<5 {
            do { return try statement() } catch let error as DatabaseError where error.sqlState == "23503" { continue }
        }
        return try statement()
    }
}
