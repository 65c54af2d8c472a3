import Foundation
import Rule
import Values

/// The daemon's SQL: the batch query, the runs table and the claim/send/record protocol of docs/delivery.md.
///
/// Stateless; every call takes the connection to use, so that each worker thread uses its own.
package struct NotificationStore: Sendable {
    /// Who claims rows, as written to `claimed_by` (`host:pid`).
    package let owner: String
    /// When a claim may be taken over (`CLAIM_LEASE_SECONDS`).
    package let claimSQL: ClaimSQL
    /// The claim statement, parsed once per store (a worker runs it for every few messages).
    private let claimStatement: SQLStatement

    /// Creates a store that claims as `owner`, with claims through a pooler leased for `claimLeaseSeconds`.
    package init(owner: String, claimLeaseSeconds: Double) {
        self.owner = owner
        claimSQL = ClaimSQL(leaseSeconds: claimLeaseSeconds)
        claimStatement = Self.claimStatement(claimSQL)
    }

    // MARK: The batch query

    /// Streams every user whose latest trusted check-in (dated at most `D + 1`) is before `runDate`
    /// and on or before `rule.latestQualifyingCheckIn(runDate:)` — one set-based statement for all
    /// users, results streamed row by row, ordered by `L'` (latest first), then user id.
    ///
    /// The due set is the `UNION ALL` of three range scans, so it costs what the listed users cost
    /// (docs/guards.md): (1) the window of `user_last_check_in` (kept by triggers on `check_ins`
    /// and `notification_logs`, migrations 004 and 005; "once per streak" is the comparison of the
    /// latest accepted notification with `L'`); (2) the users whose summary holds a date after
    /// `D + 1` (future-dated rows, a small set), whose real `L` is one probe of the check-in index;
    /// (3) the users whose pause ended recently (`users_paused_until_idx`; for a run of some
    /// times `users_paused_slot_idx`, one range per time) and whose `L` is older than the window.
    /// `includeStale: false` leaves out users past the catch-up window (the real run only counts
    /// them, see `countStale`); the dry-run report lists them too.
    ///
    /// The other accounts of the same contact (for `superseded`) are looked up, one index probe
    /// each, only for users the rule could send to — not paused, `L'` within the due window, not
    /// notified in the streak — which is every user for whom the rule asks; the others get none.
    /// They come as extra rows (a left join), grouped back into one candidate here. JIT compilation
    /// is off for the statement: on this short plan it cost more than the whole query (190 ms of
    /// 0.76 s at 1,000,000 users).
    ///
    /// `slots` (slot keys, `SlotSQL`) limits it to the users of those slots: a run date that
    /// serves some slots only. The summary's slot index reads only their rows
    /// (migration 015); the user row each listed user's probe reads is checked too.
    ///
    /// `part` (`index` of `count`) streams one of `count` disjoint shares of the users (by a hash
    /// of the id), each in the same order: readers that may go on side by side on connections of
    /// their own (the dry run) split the per-user probes between the server's cores.
    ///
    /// `fromTheEnd`: the same users in the opposite order — a daemon that joins another's sending
    /// (`SharedSending`) reads from the other end, so that the two meet in the middle rather than
    /// claim the same users one after the other.
    ///
    /// `holdsWithin`: the intake guard's recorded holds of streaks starting in that range come with
    /// each user the rule could send to (`Candidate.recordedHolds`: one probe each); nil reads none.
    ///
    /// `summary`: the summary to read — `CheckInQueue.summary(_:)` says when the table alone will do.
    package func streamCandidates(_ db: PGConnection, runDate: CalendarDate, rule: MissRule, includeStale: Bool = true,
                                 slots: [String]? = nil, part: (index: Int, count: Int)? = nil, fromTheEnd: Bool = false,
                                 holdsWithin: ClosedRange<CalendarDate>? = nil,
                                 summary: CheckInQueue.Summary = .current, _ body: (Candidate) throws -> Void) throws {
        let statement = SQLStatement("""
            WITH due AS (
                SELECT s.user_id, s.last_check_in_date AS last, NULL::date AS future, s.last_notified_date AS notified
                FROM \(summary.sql) s
                WHERE s.last_check_in_date <= $latest_qualifying::date AND s.last_check_in_date >= $oldest::date
                  AND \(SlotSQL.summaryFilter("s"))
                UNION ALL
                SELECT s.user_id, r.last, s.last_check_in_date, s.last_notified_date
                FROM \(summary.sql) s
                CROSS JOIN LATERAL (SELECT \(GuardSQL.latestTrustedCheckIn("s.user_id", trusted: "$latest_trusted::date")) AS last OFFSET 0) r
                WHERE s.last_check_in_date > $latest_trusted::date AND r.last <= $latest_qualifying::date AND \(SlotSQL.summaryFilter("s"))
                UNION ALL
                -- One summary probe per recently paused user (never a scan of the stale users).
                SELECT s.user_id, s.last_check_in_date, NULL, s.last_notified_date
                FROM users p
                CROSS JOIN LATERAL (SELECT * FROM \(summary.sql) s WHERE s.user_id = p.id
                                    AND s.last_check_in_date < $oldest::date OFFSET 0) s
                WHERE p.paused_until >= $oldest::date AND \(SlotSQL.filter("p"))
                  -- The share's filter before the probe, as the outer one would apply after it.
                  AND ($parts::int IS NULL OR (hashtext(p.id::text) & 2147483647) % $parts::int = $part::int)
            )
            SELECT u.id::text AS id, u.name, u.emergency_email, d.last, u.notified, u.paused_until, d.future, u.language,
                   \(SlotSQL.key("u")) AS slot,
                   o.id AS other_id, o.name AS other_name, o.last AS other_last, c.contacts, h.holds
            FROM due d
            -- One primary-key probe per listed user (OFFSET 0 keeps the planner from turning this
            -- into a hash join that scans every user): the cost follows the listed users only.
            CROSS JOIN LATERAL (SELECT id, name, emergency_email, paused_until, time_zone, notify_time, language,
                                       coalesce(d.notified > greatest(d.last, paused_until), false) AS notified
                                FROM users WHERE users.id = d.user_id AND \(SlotSQL.filter("users")) OFFSET 0) u
            LEFT JOIN LATERAL (\(GuardSQL.otherAccounts("u", trusted: "$latest_trusted::date", when: """
                $supersede::bool AND \(Self.mayBeSentTo)
                """))) o ON true
            LEFT JOIN LATERAL (\(GuardSQL.contacts("u", when: Self.mayBeSentTo))) c ON true
            LEFT JOIN LATERAL (\(HoldStore.recordedSQL("u", when: Self.mayBeSentTo))) h ON true
            WHERE (d.last >= $oldest::date OR u.paused_until >= $oldest::date)
              AND ($parts::int IS NULL OR (hashtext(d.user_id::text) & 2147483647) % $parts::int = $part::int)
            ORDER BY \(fromTheEnd ? "greatest(d.last, u.paused_until), d.user_id DESC" : "greatest(d.last, u.paused_until) DESC, d.user_id")
            """)
        let oldest = includeStale ? "-infinity" : rule.oldestDueCheckIn(runDate: runDate).description
        var pending: Candidate?
        try db.stream(statement, HoldStore.binds(holdsWithin).merging([
            "latest_qualifying": rule.latestQualifyingCheckIn(runDate: runDate).description, "oldest": oldest,
            "latest_trusted": rule.latestTrustedCheckIn(runDate: runDate).description, "supersede": rule.supersede ? "true" : "false",
            "run_date": runDate.description, "oldest_due": rule.oldestDueCheckIn(runDate: runDate).description,
            "slots": SlotSQL.bind(slots), "parts": part.map { String($0.count) }, "part": part.map { String($0.index) },
        ]) { $1 }, localSettings: [("jit", "off")]) { row in
            guard let id = row.string("id"), let last = row.date("last") else { return }
            if pending?.userID != id {
                if let done = pending { try body(done) }
                pending = Candidate(userID: id, rawName: row.string("name"), rawEmail: row.string("emergency_email"), lastCheckIn: last,
                                    notifiedInStreak: row.bool("notified"), pausedUntil: row.date("paused_until"),
                                    ignoredFutureCheckIn: row.date("future"), contacts: GuardSQL.contacts(row),
                                    slot: row.string("slot"))
                pending?.language = row.string("language")
                pending?.recordedHolds = HoldStore.recorded(row)
            }
            if let other = GuardSQL.otherAccount(row) { pending?.sameContact.append(other) }
        }
        if let done = pending { try body(done) }
    }

    /// SQL over the batch query's `u` and `d`: the rule could send to this user — not paused on
    /// `$run_date`, not notified in the streak, `L'` within the due window. Only such users get the
    /// probes for other accounts and contacts.
    private static let mayBeSentTo = """
        (u.paused_until IS NULL OR u.paused_until < $run_date::date) AND NOT u.notified
        AND greatest(d.last, u.paused_until) BETWEEN $oldest_due::date AND $latest_qualifying::date
        """

    /// The shared decision code of the real run, the dry run and `retry`: streams the candidates
    /// of the batch query through `rule` and hands every user the report lists (`m ≥ threshold`)
    /// to `body` — only `onlyUsers` when given. With `includeStale: false` (the real run) stale
    /// users are not streamed; the caller counts them with `countStale`.
    package func evaluate(_ db: PGConnection, runDate: CalendarDate, rule: MissRule, includeStale: Bool = true,
                         onlyUsers: Set<String>? = nil, slots: [String]? = nil, part: (index: Int, count: Int)? = nil,
                         fromTheEnd: Bool = false, holdsWithin: ClosedRange<CalendarDate>? = nil,
                         summary: CheckInQueue.Summary = .current,
                         _ body: (Candidate, Evaluation) throws -> Void) throws {
        try streamCandidates(db, runDate: runDate, rule: rule, includeStale: includeStale, slots: slots, part: part,
                             fromTheEnd: fromTheEnd, holdsWithin: holdsWithin, summary: summary) { candidate in
            if let onlyUsers, !onlyUsers.contains(candidate.userID) { return }
            if let evaluation = rule.evaluate(candidate, runDate: runDate) { try body(candidate, evaluation) }
        }
    }

    /// The number of stale users on `runDate` (`L'` before the catch-up window) — the users the
    /// dry run lists as `stale` — from three range scans: the summary's index, minus the users of
    /// that range whose pause ended within the window (`users_paused_until_idx`, or
    /// `users_paused_slot_idx` for some times), plus the future-dated users whose real `L` (and
    /// pause) is older than the window. Of the users of `slots` only, when given (then the
    /// summary's slot index).
    package func countStale(_ db: PGConnection, runDate: CalendarDate, rule: MissRule, slots: [String]? = nil,
                           summary: CheckInQueue.Summary = .current) throws -> Int {
        try db.execute(SQLStatement("""
            SELECT (SELECT count(*) FROM \(summary.sql) s WHERE s.last_check_in_date < $oldest_due::date
                    \(SlotSQL.restrict(summary: "s", slots)))
                 - (SELECT count(*) FROM users p
                    CROSS JOIN LATERAL (SELECT 1 FROM \(summary.sql) s WHERE s.user_id = p.id
                                        AND s.last_check_in_date < $oldest_due::date OFFSET 0) s
                    WHERE p.paused_until >= $oldest_due::date \(SlotSQL.restrict(user: "p", slots)))
                 + (SELECT count(*) FROM \(summary.sql) s
                    JOIN users u ON u.id = s.user_id
                    WHERE s.last_check_in_date > $latest_trusted::date
                      AND \(GuardSQL.latestTrustedCheckIn("s.user_id", trusted: "$latest_trusted::date")) < $oldest_due::date
                      AND (u.paused_until IS NULL OR u.paused_until < $oldest_due::date)
                      \(SlotSQL.restrict(summary: "s", slots))) AS stale
            """), SlotSQL.binding(slots, ["oldest_due": rule.oldestDueCheckIn(runDate: runDate).description,
                   "latest_trusted": rule.latestTrustedCheckIn(runDate: runDate).description]))[0].int("stale") ?? 0
    }

    /// The number of users with a check-in dated after `D + 1` (ignored by the rule), from the
    /// summary's index alone.
    package func countFutureCheckIns(_ db: PGConnection, runDate: CalendarDate, rule: MissRule, slots: [String]? = nil,
                                    summary: CheckInQueue.Summary = .current) throws -> Int {
        try db.execute(SQLStatement("""
            SELECT count(*) AS future FROM \(summary.sql) s WHERE s.last_check_in_date > $latest_trusted::date
                \(SlotSQL.restrict(summary: "s", slots))
            """), SlotSQL.binding(slots, ["latest_trusted": rule.latestTrustedCheckIn(runDate: runDate).description]))[0]
            .int("future") ?? 0
    }

    // MARK: Runs

    /// Inserts a `running` row in `notifier_runs` and returns its id.
    /// `slots`: the slots the run serves (nil: every user).
    /// `joining`: the run whose sending this one joins (`SharedSending`).
    package func startRun(_ db: PGConnection, runDate: CalendarDate, mode: RunMode, host: String, slots: [String]? = nil,
                          joining: Int64? = nil) throws -> Int64 {
        let row = try db.execute(SQLStatement("""
            INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, slots, joined_run)
            VALUES ($run_date, $mode, $host, $pid, $slots::text[], $joined::bigint) RETURNING id
            """), ["run_date": runDate.description, "mode": mode.rawValue, "host": host, "slots": SlotSQL.bind(slots),
                   "pid": String(ProcessInfo.processInfo.processIdentifier), "joined": joining.map(String.init)])
        return Int64(row[0].string("id")!)!
    }

    /// Completes the run's row with its tally (status `completed`, or `failed` with `error`): one
    /// column per stored field of `RunTally.fields`.
    package func finishRun(_ db: PGConnection, id: Int64, tally: RunTally, error: String?) throws {
        let columns = RunTally.storedFields.compactMap(\.column)
        let statement = SQLStatement("""
            UPDATE sileme.notifier_runs SET finished_at = now(), status = $status, error = $error,
                   \(columns.map { "\($0) = $\($0)" }.joined(separator: ", "))
            WHERE id = $id
            """)
        var binds: [String: String?] = ["id": String(id), "status": error == nil ? "completed" : "failed", "error": error]
        for field in RunTally.storedFields { binds[field.column!] = String(tally[keyPath: field.value]) }
        try db.execute(statement, binds)
    }

    // MARK: Claim, send, record

    /// Claims each job's row — `(user, date, kind, channel, contact)` — in one statement: inserts
    /// the rows, or takes over rows that may be (re)sent now — skipped earlier, a transient failure
    /// whose retry time has come, this store's own earlier claim (a statement repeated after a
    /// broken connection), or an abandoned claim (`ClaimSQL`). Only the session whose statement
    /// wins a row gets its claim. A taken-over row keeps its `Message-ID`. The session's backend
    /// pid is recorded only on a direct session that ends with its use (`PGConnection.claimsByBackend`);
    /// through a pooler, or on a session the daemon keeps, the claim holds a lease. Results are
    /// keyed by the job's index in `jobs`.
    ///
    /// In the same statement, the claim's re-check (`GuardSQL.noLongerDue`) leaves out alerts,
    /// follow-ups and reminders of users who are no longer due — a check-in, a pause or a newer account committed
    /// since the run evaluated them — and returns them as cancelled. A user the app deleted since
    /// the evaluation is left out too and returned as gone — never a foreign-key error that would
    /// stop the run: the statement leaves out users its snapshot no longer has, and should a
    /// deletion commit between its snapshot and its foreign-key check (23503), it runs again with
    /// a new snapshot (`againAfterDeletion`). (Locking the users' rows instead would need UPDATE
    /// rights on the app's table.) `jobs` must not hold one key twice (`DeliveryJob.key`).
    package func claim(_ db: PGConnection, jobs: [DeliveryJob], runDate: CalendarDate, runID: Int64?,
                      newMessageIDs: [String], supersede: Bool) throws -> ClaimBatch {
        guard !jobs.isEmpty else { return ClaimBatch() }
        let result = try Self.againAfterDeletion { try db.executePrepared(claimStatement, [
            "run_date": runDate.description, "owner": owner, "run_id": runID.map(String.init),
            "supersede": supersede ? "true" : "false", "direct": String(try db.claimsByBackend),
            "user_ids": PGArray.literal(jobs.map(\.userID)), "miss": PGArray.literal(jobs.map { String($0.missedDays) }),
            "message_ids": PGArray.literal(newMessageIDs), "lasts": PGArray.literal(jobs.map(\.lastCheckIn.description)),
            "masked": PGArray.literal(jobs.map(\.recipientMasked)), "sinces": PGArray.literal(jobs.map(\.countedFrom.description)),
            "names": PGArray.literal(jobs.map(\.name.value)), "kinds": PGArray.literal(jobs.map(\.kind.rawValue)),
            "days": PGArray.literal(jobs.map { $0.date(runDate: runDate).description }),
            "contacts": PGArray.literal(jobs.map(\.contactKey)), "in_reply_to": PGArray.literal(jobs.map(\.inReplyTo)),
            // `event_at`: the check-in of an all-clear; for any app's event the first claim's time.
            "event_epochs": PGArray.literal(jobs.map { job in
                (job.checkedIn?.at ?? (job.channel.audience == .app ? Date() : nil)).map { String($0.timeIntervalSince1970) }
            }),
            "channels": PGArray.literal(jobs.map(\.channel.rawValue)),
        ]) }
        var batch = ClaimBatch()
        for row in result.rows {
            guard let ordinal = row.int("ord"), ordinal >= 1, ordinal <= jobs.count else { continue }
            let index = ordinal - 1
            if row.bool("gone") {
                batch.gone.insert(index)
            } else if let reason = row.string("cancelled") {
                batch.cancelled[index] = reason
            } else if let id = Int64(row.string("id") ?? ""), let messageID = row.string("message_id") {
                batch.claims[index] = Claim(logID: id, messageID: messageID, previousAttempts: row.int("attempts") ?? 0,
                                            tookOver: row.bool("took_over"),
                                            eventAt: row.string("event_epoch").flatMap(Double.init).map(Date.init(timeIntervalSince1970:)))
            }
        }
        return batch
    }

    /// The claim statement (see `claim`), one text for every call: prepared once per session.
    private static func claimStatement(_ claimSQL: ClaimSQL) -> SQLStatement {
        SQLStatement("""
            WITH j AS MATERIALIZED (
                SELECT j.*, EXISTS (SELECT 1 FROM users u WHERE u.id = j.user_id) AS live,
                       coalesce(
                           CASE WHEN j.kind IN ('alert', 'follow_up', 'reminder')
                                THEN coalesce(\(GuardSQL.noLongerDue(job: "j", runDate: "$run_date::date", supersede: "$supersede::bool")),
                                              -- A contact acknowledged the streak since the plan was read (docs/acknowledgement.md).
                                              CASE WHEN j.kind = 'follow_up' AND \(LifecycleStore.acknowledged(user: "j.user_id", alertDate: "j.day"))
                                                   THEN 'acknowledged' END) END,
                           -- A mail of the streak to this contact bounced since the plan was read (docs/bounces.md).
                           CASE WHEN j.kind IN \(LifecycleStore.noticeKinds)
                                     AND \(LifecycleStore.bounced(user: "j.user_id", date: "j.day", contact: "j.contact", channel: "j.channel"))
                                THEN 'contact_bounced' END) AS cancelled
                FROM unnest($user_ids::uuid[], $miss::int[], $message_ids::text[], $lasts::date[], $masked::text[],
                            $sinces::date[], $names::text[], $kinds::text[], $days::date[], $contacts::text[],
                            $in_reply_to::text[], $event_epochs::float8[], $channels::text[])
                     WITH ORDINALITY AS j(user_id, miss, message_id, last, masked, since, name,
                                          kind, day, contact, in_reply_to, event_epoch, channel, ord)
            ), claimed AS (
                INSERT INTO notification_logs AS n
                    (user_id, notification_date, kind, channel, contact, email_sent, consecutive_miss_days, status,
                     attempts, message_id, claimed_by, claim_backend_pid, claimed_at, last_check_in_date,
                     recipient_masked, run_id, in_reply_to, event_at, updated_at)
                SELECT j.user_id, j.day, j.kind, j.channel, j.contact, false, j.miss, 'sending', 0, j.message_id, $owner,
                       CASE WHEN $direct::boolean THEN pg_backend_pid() END, now(), j.last, j.masked, $run_id::bigint,
                       j.in_reply_to, to_timestamp(j.event_epoch), now()
                FROM j WHERE j.live AND j.cancelled IS NULL
                -- In the key's order, whatever the batch's: two sessions claiming overlapping rows
                -- (daemons sharing a run's sending read the due set from its two ends) take their
                -- row locks in one order, and never wait for each other in a circle (a deadlock).
                ORDER BY j.user_id, j.day, j.kind, j.channel, j.contact
                ON CONFLICT (user_id, notification_date, kind, channel, contact) DO UPDATE
                    SET status = 'sending', claimed_by = EXCLUDED.claimed_by,
                        claim_backend_pid = EXCLUDED.claim_backend_pid, claimed_at = now(),
                        consecutive_miss_days = EXCLUDED.consecutive_miss_days,
                        last_check_in_date = EXCLUDED.last_check_in_date,
                        recipient_masked = EXCLUDED.recipient_masked, run_id = EXCLUDED.run_id,
                        message_id = COALESCE(n.message_id, EXCLUDED.message_id),
                        in_reply_to = COALESCE(n.in_reply_to, EXCLUDED.in_reply_to),
                        event_at = COALESCE(n.event_at, EXCLUDED.event_at), updated_at = now()
                    -- Claimable now, or this store's own claim (a statement repeated after a broken connection).
                    WHERE \(claimSQL.claimableNow("n")) OR (NOT n.email_sent AND n.status = 'sending' AND n.claimed_by = EXCLUDED.claimed_by)
                RETURNING n.user_id, n.notification_date, n.kind, n.channel, n.contact, n.id::text AS id, n.message_id, n.attempts,
                          (n.xmax <> 0) AS took_over, extract(epoch FROM n.event_at) AS event_epoch
            )
            SELECT j.ord, c.id, c.message_id, c.attempts, c.took_over, j.cancelled, NOT j.live AS gone, c.event_epoch
            FROM j LEFT JOIN claimed c
                 ON c.user_id = j.user_id AND c.notification_date = j.day AND c.kind = j.kind AND c.channel = j.channel
                    AND c.contact = j.contact
            WHERE c.id IS NOT NULL OR NOT j.live OR j.cancelled IS NOT NULL
            """)
    }

    /// Renews the lease of this store's claims that are still being sent (the recorder calls it
    /// every quarter of `CLAIM_LEASE_SECONDS`), so a long send through a pooler is never taken for
    /// a crashed one. `claimed_by` is this run's own.
    package func renewClaims(_ db: PGConnection) throws {
        try db.execute(Self.renewStatement, ["owner": owner])
    }

    /// `renewClaims`' statement.
    private static let renewStatement = SQLStatement("""
        UPDATE notification_logs SET claimed_at = now() WHERE claimed_by = $owner AND status = 'sending'
        """)

    /// Records outcomes in at most two statements: accepted mails (`email_sent = true`, `sent_at`,
    /// the server's reply) and failures (`retry` with `next_attempt_at`, or `failed`). Idempotent:
    /// writing the same outcomes again (after a broken connection) leaves sent rows and rows no
    /// longer `sending` alone. The failures' statement marks a contact refused as unknown
    /// `undeliverable` in `contact_status` (`RecordedOutcome.undeliverable`); `ok` is written after
    /// the sends (`markContactsOK`), off this statement, which bounds the crash window.
    package func record(_ db: PGConnection, _ outcomes: [RecordedOutcome]) throws {
        let sent = outcomes.filter { $0.status == .sent }
        if !sent.isEmpty {
            try db.executePrepared(Self.recordSent, [
                "ids": PGArray.literal(sent.map { String($0.logID) }), "attempts": PGArray.literal(sent.map { String($0.attempts) }),
                "replies": PGArray.literal(sent.map { String($0.text.prefix(1000)) }),
                "at_epochs": PGArray.literal(sent.map { String($0.at.timeIntervalSince1970) }),
                "relays": PGArray.literal(sent.map(\.relay)),
            ])
        }
        let failed = outcomes.filter { $0.status != .sent }
        if !failed.isEmpty {
            try db.executePrepared(Self.recordFailed, [
                "ids": PGArray.literal(failed.map { String($0.logID) }), "statuses": PGArray.literal(failed.map(\.status.rawValue)),
                "attempts": PGArray.literal(failed.map { String($0.attempts) }),
                "errors": PGArray.literal(failed.map { String($0.text.prefix(1000)) }),
                "next_epochs": PGArray.literal(failed.map { $0.nextAttempt.map { String($0.timeIntervalSince1970) } }),
                "undeliverable": PGArray.literal(failed.map { String($0.undeliverable) }),
            ])
        }
        let passedOver = outcomes.flatMap(\.passedOver)
        if !passedOver.isEmpty {
            // Rare (a relay failed as a relay): counted per relay, apart from the rows.
            try db.execute(SQLStatement("""
                INSERT INTO sileme.relay_counts AS c (relay, passed_over)
                SELECT relay, count(*) FROM unnest($relays::text[]) AS p(relay) GROUP BY relay ORDER BY relay
                ON CONFLICT (relay) DO UPDATE SET passed_over = c.passed_over + EXCLUDED.passed_over, updated_at = now()
                """), ["relays": PGArray.literal(passedOver)])
        }
    }

    /// `record`'s statement for accepted messages (parsed once: the recorder runs it per micro-batch).
    private static let recordSent = SQLStatement("""
            WITH r AS (SELECT * FROM unnest($ids::bigint[], $attempts::int[], $replies::text[], $at_epochs::float8[], $relays::text[])
                       AS r(id, attempts, reply, at_epoch, relay)),
            done AS (
                UPDATE notification_logs n SET status = 'sent', email_sent = true, sent_at = to_timestamp(r.at_epoch),
                       attempts = n.attempts + r.attempts, last_error = NULL, next_attempt_at = NULL,
                       last_reply = r.reply, relay = r.relay, updated_at = now()
                FROM r WHERE n.id = r.id AND NOT n.email_sent
                RETURNING n.user_id, n.contact, n.channel, n.kind, r.reply, r.relay
            ), counted AS (
                -- The mail each relay accepted, counted once per row (a row written again is not
                -- in `done`); in relay order, so that two recorders lock the counts alike.
                INSERT INTO sileme.relay_counts AS c (relay, accepted)
                SELECT relay, count(*) FROM done WHERE relay IS NOT NULL GROUP BY relay ORDER BY relay
                ON CONFLICT (relay) DO UPDATE SET accepted = c.accepted + EXCLUDED.accepted, updated_at = now()
            ), introduced AS (
                -- An introduction mail accepted settles its pair in the same statement (the
                -- webhook's event tells the app, not the contact).
                UPDATE sileme.known_contacts k SET state = 'introduced', updated_at = now()
                FROM done WHERE done.kind = 'introduction' AND done.channel = ANY($contact_channels::text[])
                  AND k.user_id = done.user_id AND k.contact = done.contact AND k.state IN ('pending', 'existing')
            )
            SELECT count(*) FROM done
            """)

    /// `record`'s statement for failures.
    private static let recordFailed = SQLStatement("""
            WITH r AS (SELECT * FROM unnest($ids::bigint[], $statuses::text[], $attempts::int[], $errors::text[], $next_epochs::float8[], $undeliverable::bool[])
                                     AS r(id, status, attempts, error, next_epoch, undeliverable)),
            done AS (
                UPDATE notification_logs n SET status = r.status, attempts = n.attempts + r.attempts,
                       last_error = r.error, last_reply = r.error, next_attempt_at = to_timestamp(r.next_epoch),
                       updated_at = now()
                FROM r WHERE n.id = r.id AND NOT n.email_sent AND n.status = 'sending'
                RETURNING n.user_id, n.contact, n.channel, n.kind, r.status, r.error AS reply, r.undeliverable
            ), refused AS (
                -- An introduction refused for good is not tried again on later days.
                UPDATE sileme.known_contacts k SET state = 'not_introduced', updated_at = now()
                FROM done WHERE done.kind = 'introduction' AND done.status = 'failed'
                  AND done.channel = ANY($contact_channels::text[])
                  AND k.user_id = done.user_id AND k.contact = done.contact AND k.state = 'pending'
            )
            \(Self.contactStatusUpsert(from: "(SELECT * FROM done WHERE undeliverable) d", status: "'undeliverable'"))
            """)

    /// Marks the contacts of the accepted rows `logIDs` `ok` in `contact_status` (one statement,
    /// after a run's or a pass's sends): the app learns the address works, and a contact marked
    /// undeliverable earlier is cleared by its next accepted mail.
    package func markContactsOK(_ db: PGConnection, logIDs: [Int64]) throws {
        guard !logIDs.isEmpty else { return }
        try db.execute(SQLStatement("""
            WITH done AS (
                SELECT n.user_id, n.contact, n.channel, n.last_reply AS reply FROM notification_logs n
                WHERE n.id = ANY($log_ids::bigint[]) AND n.email_sent
            )
            \(Self.contactStatusUpsert(from: "done", status: "'ok'"))
            """), ["log_ids": PGArray.literal(logIDs.map(String.init))])
    }

    /// SQL: writes `status` to `contact_status` for the e-mail contacts of the rows `from` returns
    /// (`user_id`, `contact`, `channel`, `reply`), one row per contact — after a send's answer,
    /// and after a bounce (`BounceStore`).
    static func contactStatusUpsert(from rows: String, status: String) -> String {
        """
        INSERT INTO contact_status AS s (user_id, email, status, last_reply, updated_at)
        SELECT DISTINCT ON (user_id, contact) user_id, contact, \(status), left(reply, 500), now()
        FROM \(rows) WHERE channel = ANY($contact_channels::text[]) AND contact <> ''
        ORDER BY user_id, contact
        ON CONFLICT (user_id, email) DO UPDATE
            SET status = EXCLUDED.status, last_reply = EXCLUDED.last_reply, updated_at = now()
        """
    }

    /// One user as the rule sees them on `runDate` (for `--preview`), whether or not they are due:
    /// nil when there is no such user; `lastCheckIn` nil when they never checked in before `runDate`.
    /// Check-ins dated after `D + 1` are ignored as the batch query ignores them (and named).
    package func user(_ db: PGConnection, id: String, runDate: CalendarDate, rule: MissRule)
        throws -> (candidate: Candidate?, checkedInSince: Bool, name: String?, email: String?)? {
        let result = try db.execute(SQLStatement("""
            SELECT u.id::text AS id, u.name, u.emergency_email, l.last,
                   EXISTS (SELECT 1 FROM check_ins c WHERE c.user_id = u.id
                           AND c.check_in_date BETWEEN $run_date::date AND $latest_trusted::date) AS checked_in_since,
                   EXISTS (SELECT 1 FROM notification_logs n WHERE n.user_id = u.id
                           AND n.notification_date > greatest(l.last, u.paused_until) AND n.email_sent) AS notified,
                   u.paused_until, u.language,
                   (SELECT max(c.check_in_date) FROM check_ins c WHERE c.user_id = u.id AND c.check_in_date > $latest_trusted::date) AS future,
                   o.id AS other_id, o.name AS other_name, o.last AS other_last, c.contacts
            FROM users u
            LEFT JOIN LATERAL (\(GuardSQL.otherAccounts("u", trusted: "$latest_trusted::date", when: "$supersede::bool"))) o ON true
            LEFT JOIN LATERAL (\(GuardSQL.contacts("u"))) c ON true
            CROSS JOIN LATERAL (SELECT max(check_in_date) AS last FROM check_ins c
                                WHERE c.user_id = u.id AND c.check_in_date < $run_date::date) l
            WHERE u.id::text = $id
            """), ["id": id.lowercased(), "run_date": runDate.description,
                   "latest_trusted": rule.latestTrustedCheckIn(runDate: runDate).description, "supersede": rule.supersede ? "true" : "false"])
        guard result.count >= 1 else { return nil }
        let row = result[0]
        let candidate = row.date("last").map {
            var candidate = Candidate(userID: row.string("id")!, rawName: row.string("name"), rawEmail: row.string("emergency_email"),
                                      lastCheckIn: $0, notifiedInStreak: row.bool("notified"), pausedUntil: row.date("paused_until"),
                                      ignoredFutureCheckIn: row.date("future"), sameContact: result.rows.compactMap { GuardSQL.otherAccount($0) },
                                      contacts: GuardSQL.contacts(row))
            candidate.language = row.string("language")
            return candidate
        }
        return (candidate, row.bool("checked_in_since"), row.string("name"), row.string("emergency_email"))
    }

    /// The rows of `runDate` that the `retry` command re-attempts: permanent and transient failures
    /// and claims whose process died — of one user, or of everyone; of `kinds`, or of every kind.
    package func retryTargets(_ db: PGConnection, runDate: CalendarDate, userID: String?,
                             kinds: [DeliveryJob.Kind]? = nil) throws -> [RetryTarget] {
        try db.execute(SQLStatement("""
            SELECT n.user_id::text AS user_id, n.status, n.attempts, n.last_error,
                   coalesce(n.recipient_masked, CASE WHEN n.contact <> '' THEN n.contact END) AS recipient, n.kind,
                   n.contact = '' OR \(GuardSQL.contactInForce(user: "n.user_id", contact: "n.contact")) AS contact_in_force, n.channel,
                   n.kind IN \(LifecycleStore.noticeKinds)
                       AND \(LifecycleStore.bounced(user: "n.user_id", date: "n.notification_date", contact: "n.contact", channel: "n.channel"))
                       AS contact_bounced,
                   (SELECT u.language FROM users u WHERE u.id = n.user_id) AS user_language,
                   \(GuardSQL.contactLanguage(user: "n.user_id", contact: "n.contact")) AS contact_language
            FROM notification_logs n
            WHERE n.notification_date = $run_date::date AND NOT n.email_sent AND ($user_id::uuid IS NULL OR n.user_id = $user_id::uuid)
              AND (n.status IN ('failed', 'retry')
                   OR \(claimSQL.abandoned("n")))
              AND ($kinds::text[] IS NULL OR n.kind = ANY($kinds::text[]))
            ORDER BY n.user_id, n.kind, n.contact
            """), ["run_date": runDate.description, "user_id": userID, "kinds": kinds.map { PGArray.literal($0.map(\.rawValue)) }]).rows.compactMap { row in
                row.string("user_id").map {
                    var target = RetryTarget(userID: $0, status: row.string("status") ?? "", attempts: row.int("attempts") ?? 0,
                                             lastError: row.string("last_error"), recipient: row.string("recipient").map(EmailMasking.mask))
                    target.kind = row.string("kind") ?? "alert"
                    target.contactInForce = row.bool("contact_in_force")
                    target.channel = row.string("channel").flatMap(DeliveryJob.Channel.init(rawValue:)) ?? .primary
                    target.contactBounced = row.bool("contact_bounced")
                    target.contactLanguage = row.string("contact_language")
                    target.userLanguage = row.string("user_language")
                    if target.channel.audience == .app { target.recipient = target.channel.rawValue }
                    return target
                }
            }
    }

    /// Makes failed rows of `userIDs` on `runDate` claimable now (`retry`, due immediately) — of
    /// `kinds`, or of every kind.
    package func releaseForRetry(_ db: PGConnection, userIDs: [String], runDate: CalendarDate,
                                kinds: [DeliveryJob.Kind]? = nil) throws {
        guard !userIDs.isEmpty else { return }
        try db.execute(SQLStatement("""
            UPDATE notification_logs SET status = 'retry', next_attempt_at = now(), updated_at = now()
            WHERE notification_date = $run_date::date AND user_id = ANY($user_ids::uuid[]) AND NOT email_sent
              AND status IN ('failed', 'retry') AND ($kinds::text[] IS NULL OR kind = ANY($kinds::text[]))
              -- A refused alert mail of a streak another contact was told of stays refused (a
              -- webhook event refused is sent again: the operator fixed the endpoint).
              AND NOT (kind = 'alert' AND channel = ANY($contact_channels::text[]) AND status = 'failed'
                       AND EXISTS (SELECT 1 FROM sileme.user_last_check_in s WHERE s.user_id = notification_logs.user_id
                                   AND s.last_notified_date > notification_logs.last_check_in_date))
            """), ["run_date": runDate.description, "user_ids": PGArray.literal(userIDs), "kinds": kinds.map { PGArray.literal($0.map(\.rawValue)) }])
    }

    /// Records alerts skipped for bad data (one statement for all of them): a whole user (contact
    /// '') or one invalid contact beside valid ones. A row that already exists for the day is left
    /// as it is, and a user deleted meanwhile is left out.
    package func recordSkips(_ db: PGConnection, _ skips: [SkippedUser], runDate: CalendarDate, runID: Int64?) throws {
        guard !skips.isEmpty else { return }
        _ = try Self.againAfterDeletion { try db.execute(SQLStatement("""
            INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent,
                                           consecutive_miss_days, status, last_error, last_check_in_date, run_id, updated_at)
            SELECT s.user_id, $run_date::date, 'alert', ($contact_channels::text[])[1], s.contact, false, s.miss, 'skipped', s.reason, s.last, $run_id::bigint, now()
            FROM unnest($user_ids::uuid[], $miss::int[], $reasons::text[], $lasts::date[], $contacts::text[]) AS s(user_id, miss, reason, last, contact)
            WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id)  -- deleted since the evaluation: no row
            ON CONFLICT (user_id, notification_date, kind, channel, contact) DO NOTHING
            """), [
            "run_date": runDate.description, "run_id": runID.map(String.init), "user_ids": PGArray.literal(skips.map(\.userID)),
            "miss": PGArray.literal(skips.map { String($0.missedDays) }), "reasons": PGArray.literal(skips.map(\.reason)),
            "lasts": PGArray.literal(skips.map(\.lastCheckIn.description)), "contacts": PGArray.literal(skips.map(\.contact)),
        ]) }
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
