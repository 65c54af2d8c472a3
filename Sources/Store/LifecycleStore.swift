import Config
import Foundation
import Rule
import Values

/// The SQL of the messages around an alert (docs/lifecycle.md): which all-clears, follow-ups and
/// introductions are due now, and the bookkeeping of the all-clear queue and of the introduced
/// pairs. Stateless, like `NotificationStore`; every query reads only small sets (the queue, the
/// recent accepted alerts by date, the pending pairs).
///
/// Not Sendable: with `pages` it calls back into the thread that reads (`Pages`); it is made where
/// it is used, for one statement or one read.
package struct LifecycleStore {
    /// One message the lifecycle owes, as the database has it (validated into a job by the caller).
    package struct Due: Sendable {
        /// What to send.
        package var kind: DeliveryJob.Kind
        /// `users.id`.
        package var userID: String
        /// `users.name` as stored.
        package var rawName: String?
        /// The contact (the address as stored where known; else the row's key).
        package var contact: String
        /// The contact's position (1 where unknown).
        package var position: Int
        /// The row's `notification_date`: the alert's date (all-clear, follow-up) or nil (the run date).
        package var notificationDate: CalendarDate?
        /// The alert's `Message-ID` (all-clear, follow-up).
        package var inReplyTo: String?
        /// `m` to show.
        package var missedDays: Int
        /// `L`.
        package var lastCheckIn: CalendarDate
        /// The check-in that ended the streak (all-clear).
        package var checkedIn: (at: Date, date: CalendarDate)?
        /// The channel: a webhook row's `contact` is '' (or, for an introduction, the contact).
        package var channel: DeliveryJob.Channel = .email
        /// The end of a pause the alert's days were counted from (a webhook alert finished later).
        package var pausedUntil: CalendarDate?
        /// Who acknowledged the streak's alert and when (an `acknowledged` notice).
        package var acknowledgement: (contact: String, at: Date)? = nil
        /// The bounce an `undeliverable` event reports.
        package var bounce: DeliveryJob.Bounce? = nil
        /// Who said how the streak ended and when (an outcome notice).
        package var outcome: (contact: String, at: Date)? = nil

        /// A message as a report lists it (the dry run's, read back from disk): what it shows of
        /// it, and what a webhook alert's event is made of.
        package static func listed(kind: DeliveryJob.Kind, channel: DeliveryJob.Channel, userID: String, rawName: String?,
                                   contact: String, notificationDate: CalendarDate?, inReplyTo: String?, missedDays: Int,
                                   lastCheckIn: CalendarDate) -> Due {
            Due(kind: kind, userID: userID, rawName: rawName, contact: contact, position: 1, notificationDate: notificationDate,
                inReplyTo: inReplyTo, missedDays: missedDays, lastCheckIn: lastCheckIn, channel: channel)
        }

        /// A new alert's webhook event (one per user, no contact in the key): what the dry run lists.
        package static func webhookAlert(userID: String, rawName: String?, missedDays: Int, lastCheckIn: CalendarDate) -> Due {
            Due(kind: .alert, userID: userID, rawName: rawName, contact: "", position: 1, notificationDate: nil, inReplyTo: nil,
                missedDays: missedDays, lastCheckIn: lastCheckIn, channel: .webhook)
        }
    }

    /// When claims may be taken over (`CLAIM_LEASE_SECONDS`).
    package let claimSQL: ClaimSQL
    /// Where the owed-message queries' rows go: nil, into the arrays they return; else a page at
    /// a time (`Pages`: a run streaming its owed messages into its senders).
    package var pages: Pages? = nil

    /// Creates the store.
    package init(claimLeaseSeconds: Double, pages: Pages? = nil) {
        claimSQL = ClaimSQL(leaseSeconds: claimLeaseSeconds)
        self.pages = pages
    }

    /// SQL: no row of the key (`user`, `date`, `kind`, `channel`, `contact` — each an SQL
    /// expression) exists that this pass must leave alone — sent, failed for good, in flight, or
    /// waiting for its retry time.
    func noSettledRow(user: String, date: String, kind: String, contact: String, channel: String) -> String {
        """
        NOT EXISTS (SELECT 1 FROM notification_logs x
                    WHERE x.user_id = \(user) AND x.notification_date = \(date) AND x.kind = \(kind)
                      AND x.channel = \(channel) AND x.contact = \(contact)
                      AND NOT \(claimSQL.claimableNow("x")))
        """
    }

    /// The all-clears due now: for every user in the all-clear queue (a check-in ended a streak
    /// whose alert was accepted, written by the check-in trigger), and for every alert accepted
    /// since `windowStart` whose user has a check-in after the alert's `L` dated at most
    /// `latestTrusted` (an alert accepted after the check-in came, or a queue the trigger could
    /// not fill), one per alert and contact: each contact that got an accepted alert of the
    /// streak, unless its all-clear is sent, failed for good, in flight or waiting for its retry.
    /// An all-clear whose row waits for a retry (or was left claimed by a crash) is due again when
    /// its time comes, whether or not its queue entry is still there. `onlyUsers` limits it (`retry`,
    /// and the daemon's pass for the check-ins it has just heard of).
    /// Each channel of `channels` answers its own alerts (a webhook all-clear follows a delivered
    /// app's alert); a contact's retries come from here, the app's from `unfinishedEvents`.
    package func dueAllClears(_ db: PGConnection, windowStart: CalendarDate, latestTrusted: CalendarDate,
                             channels: [DeliveryJob.Channel] = [.email], onlyUsers: [String]? = nil) throws -> [Due] {
        try owed(db, SQLStatement("""
            -- MATERIALIZED: with statistics that have not seen today's alerts yet, the planner
            -- estimated one row and ran the whole union once per alert (4 million check-in
            -- probes at 2,016 alerts; no all-clear at all at 20,000 until an ANALYZE).
            WITH q AS MATERIALIZED (
                -- `onlyUsers` ($user_ids) limits each branch, so a pass for the check-ins just heard of
                -- reads their rows only (no check-in probe for every recent alert).
                SELECT user_id, streak_after, check_in_date, checked_in_at, NULL::date AS only_date FROM sileme.pending_all_clears
                WHERE $user_ids::uuid[] IS NULL OR user_id = ANY($user_ids::uuid[])
                UNION ALL
                -- All-clears to finish: a retry or a crashed claim, answering its own alert only.
                SELECT x.user_id, x.notification_date - 1, coalesce(x.event_at, now())::date, coalesce(x.event_at, now()),
                       x.notification_date
                FROM notification_logs x
                WHERE x.status IN ('retry', 'sending') AND x.kind = 'all_clear' AND x.channel = ANY($contact_channels::text[])
                  AND NOT x.email_sent
                  AND ($user_ids::uuid[] IS NULL OR x.user_id = ANY($user_ids::uuid[]))
                UNION ALL
                -- The summary first: only a user whose latest folded check-in is after the alert's L
                -- has one to find (a check-in still queued comes from the last branch), so the
                -- check-in probe — in a key as large as `check_ins` — is made for those alone,
                -- not for every alert of the window (126,908 probes, 4.6 s at 10M users). One
                -- summary probe per alert (OFFSET 0: not a scan of every user's summary row).
                SELECT a.user_id, a.last_check_in_date, c.check_in_date, c.at, NULL
                FROM notification_logs a
                CROSS JOIN LATERAL (SELECT 1 FROM sileme.user_last_check_in s
                                    WHERE s.user_id = a.user_id AND s.last_check_in_date > a.last_check_in_date OFFSET 0) s
                CROSS JOIN LATERAL (SELECT c.check_in_date, coalesce(c.check_in_time::timestamptz, now()) AS at
                                    FROM check_ins c
                                    WHERE c.user_id = a.user_id AND c.check_in_date > a.last_check_in_date
                                      AND c.check_in_date <= $latest_trusted::date
                                    ORDER BY c.check_in_date LIMIT 1) c
                WHERE a.email_sent AND a.kind = 'alert' AND a.notification_date >= $window_start::date
                  AND ($user_ids::uuid[] IS NULL OR a.user_id = ANY($user_ids::uuid[]))
                UNION ALL
                -- Check-ins still queued that end a notified streak: what the next fold queues
                -- (so a reader that does not fold sees the all-clears a run would send).
                SELECT s.user_id, s.last_check_in_date, max(k.check_in_date), min(k.queued_at), NULL
                FROM sileme.check_in_queue k
                JOIN sileme.user_last_check_in s ON s.user_id = k.user_id
                WHERE s.last_notified_date > s.last_check_in_date AND k.check_in_date > s.last_check_in_date
                  AND NOT EXISTS (SELECT 1 FROM sileme.pending_all_clears p WHERE p.user_id = k.user_id)
                  AND ($user_ids::uuid[] IS NULL OR k.user_id = ANY($user_ids::uuid[]))
                GROUP BY s.user_id, s.last_check_in_date
            )
            SELECT DISTINCT ON (a.user_id, a.notification_date, a.channel, a.contact)
                   a.user_id::text AS user_id, u.name, a.contact, a.notification_date, a.message_id AS in_reply_to,
                   a.consecutive_miss_days AS miss, a.last_check_in_date AS last, q.check_in_date AS checked_in_date,
                   extract(epoch FROM q.checked_in_at) AS checked_in_epoch, a.channel
            FROM q
            JOIN notification_logs a ON a.user_id = q.user_id AND a.kind = 'alert' AND a.channel = ANY($channels::text[])
                                    AND a.email_sent AND a.notification_date > q.streak_after
                                    AND (a.contact <> '' OR a.channel = ANY($app_channels::text[]))
                                    AND (q.only_date IS NULL
                                         OR (a.notification_date = q.only_date AND a.channel = ANY($contact_channels::text[])))
            JOIN users u ON u.id = a.user_id
            WHERE \(noSettledRow(user: "a.user_id", date: "a.notification_date", kind: "'all_clear'", contact: "a.contact",
                               channel: "a.channel"))
              AND NOT \(Self.bounced(user: "a.user_id", date: "a.notification_date", contact: "a.contact", channel: "a.channel"))
            ORDER BY a.user_id, a.notification_date, a.channel, a.contact, q.checked_in_at
            """), [
            "window_start": windowStart.description, "latest_trusted": latestTrusted.description,
            "user_ids": onlyUsers.map { PGArray.literal($0) }, "channels": ChannelSQL.literal(channels),
        ]) { Due($0, kind: .allClear) }
    }

    /// Whether any introduction is pending, and whether any contact's alert dated `oldest` … `runDate`
    /// is unfinished (a retry or a claim): two probes of partial indexes, so that a run with
    /// nothing of the kind — most runs, and a day of many slots has ~200 — does not plan
    /// the statements that would find nothing (1.2 ms of planning a run at a million users).
    func openWork(_ db: PGConnection, oldest: CalendarDate, runDate: CalendarDate) throws
        -> (introductions: Bool, unfinishedAlerts: Bool) {
        let row = try db.execute(SQLStatement("""
            SELECT EXISTS (SELECT 1 FROM sileme.known_contacts WHERE state = 'pending') AS introductions,
                   EXISTS (SELECT 1 FROM notification_logs
                           WHERE status IN ('sending', 'retry') AND notification_date BETWEEN $oldest::date AND $run_date::date
                             AND kind = 'alert' AND channel = ANY($contact_channels::text[])) AS unfinished
            """), ["oldest": oldest.description, "run_date": runDate.description])[0]
        return (row.bool("introductions"), row.bool("unfinished"))
    }

    /// The unfinished alerts of users whose streak was already notified through another contact:
    /// a contact's alert that a crashed run left claimed, or that waits for its retry, dated
    /// within the due window — the rule says `already_notified` for such a user, so no new alert
    /// is made for them, and without this that contact's alert would never be finished. Each
    /// comes back with its row's date (the same row is claimed, with its Message-ID).
    package func unfinishedAlerts(_ db: PGConnection, runDate: CalendarDate, oldest: CalendarDate,
                                 onlyUsers: [String]? = nil, slots: [String]? = nil) throws -> [Due] {
        try owed(db, SQLStatement("""
            SELECT n.user_id::text AS user_id, u.name, n.contact, n.notification_date, n.consecutive_miss_days AS miss,
                   n.last_check_in_date AS last
            FROM notification_logs n
            JOIN users u ON u.id = n.user_id
            JOIN sileme.user_last_check_in s ON s.user_id = n.user_id
            WHERE n.status IN ('sending', 'retry') AND n.notification_date BETWEEN $oldest::date AND $run_date::date
              AND n.kind = 'alert' AND n.channel = ANY($contact_channels::text[]) AND NOT n.email_sent AND n.contact <> ''
              AND s.last_notified_date > n.last_check_in_date
              AND ($user_ids::uuid[] IS NULL OR n.user_id = ANY($user_ids::uuid[])) AND \(SlotSQL.filter("u"))
              -- Still a contact in force (the app may have corrected or removed it since).
              AND \(GuardSQL.contactInForce(user: "n.user_id", contact: "n.contact"))
              AND \(claimSQL.unfinished("n"))
            ORDER BY n.notification_date, n.user_id, n.contact
            """), [
            "run_date": runDate.description, "oldest": oldest.description, "user_ids": onlyUsers.map { PGArray.literal($0) },
            "slots": SlotSQL.bind(slots),
        ]) { Due($0, kind: .alert) }
    }

    /// Removes the queue entries whose every all-clear — on each of `channels` — has a settled row
    /// (sent or failed for good), or that have no accepted alert to answer. Returns how many.
    @discardableResult
    package func settleAllClearQueue(_ db: PGConnection, channels: [DeliveryJob.Channel] = [.email]) throws -> Int {
        try db.execute(SQLStatement("""
            WITH gone AS (
                DELETE FROM sileme.pending_all_clears q
                WHERE NOT EXISTS (
                    SELECT 1 FROM notification_logs a
                    WHERE a.user_id = q.user_id AND a.kind = 'alert' AND a.channel = ANY($channels::text[]) AND a.email_sent
                      AND a.notification_date > q.streak_after AND (a.contact <> '' OR a.channel = ANY($app_channels::text[]))
                      AND NOT EXISTS (SELECT 1 FROM notification_logs x
                                      WHERE x.user_id = a.user_id AND x.notification_date = a.notification_date
                                        AND x.kind = 'all_clear' AND x.channel = a.channel AND x.contact = a.contact
                                        AND (x.email_sent OR x.status = 'failed')))
                RETURNING 1
            )
            SELECT count(*) AS settled FROM gone
            """), ["channels": ChannelSQL.literal(channels)])[0].int("settled") ?? 0
    }

    /// The follow-ups due on `runDate` with `FOLLOW_UP_DAYS = days`: every contact whose alert was
    /// accepted `days` days ago (or up to `catchUpDays` more, after downtime) while the streak is
    /// still open — no check-in after the alert's `L` dated at most `D + 1`, not paused now.
    /// One per alert and contact (the row's date is the alert's), on the alert's channel (of `channels`).
    package func dueFollowUps(_ db: PGConnection, runDate: CalendarDate, days: Int, catchUpDays: Int,
                             channels: [DeliveryJob.Channel] = [.email], onlyUsers: [String]? = nil,
                             slots: [String]? = nil) throws -> [Due] {
        guard days > 0 else { return [] }
        return try owed(db, SQLStatement("""
            SELECT a.user_id::text AS user_id, u.name, a.contact, a.notification_date, a.message_id AS in_reply_to,
                   a.consecutive_miss_days + ($run_date::date - a.notification_date) AS miss, a.last_check_in_date AS last, a.channel
            FROM notification_logs a
            JOIN users u ON u.id = a.user_id
            WHERE a.email_sent AND a.kind = 'alert' AND a.channel = ANY($channels::text[])
              AND (a.contact <> '' OR a.channel = ANY($app_channels::text[]))
              AND a.notification_date BETWEEN $run_date::date - $days::int - $catch_up_days::int AND $run_date::date - $days::int
              AND (u.paused_until IS NULL OR u.paused_until < $run_date::date)
              AND NOT EXISTS (SELECT 1 FROM check_ins c WHERE c.user_id = a.user_id
                              AND c.check_in_date > a.last_check_in_date AND c.check_in_date <= $run_date::date + 1)
              AND ($user_ids::uuid[] IS NULL OR a.user_id = ANY($user_ids::uuid[])) AND \(SlotSQL.filter("u"))
              -- A contact said "I'm on it" (docs/acknowledgement.md): the others were told, no follow-up.
              AND NOT \(Self.acknowledged(user: "a.user_id", alertDate: "a.notification_date"))
              AND NOT \(Self.bounced(user: "a.user_id", date: "a.notification_date", contact: "a.contact", channel: "a.channel"))
              AND \(noSettledRow(user: "a.user_id", date: "a.notification_date", kind: "'follow_up'", contact: "a.contact",
                                 channel: "a.channel"))
            ORDER BY a.notification_date, a.user_id, a.channel, a.contact
            """), [
            "run_date": runDate.description, "days": String(days), "catch_up_days": String(catchUpDays),
            "user_ids": onlyUsers.map { PGArray.literal($0) }, "channels": ChannelSQL.literal(channels),
            "slots": SlotSQL.bind(slots),
        ]) { Due($0, kind: .followUp) }
    }

    /// SQL: the kinds of a streak's notices (those threaded under its alert) as a list for `IN`:
    /// the ones a contact whose address a mail of the streak found dead no longer gets (`bounced`).
    package static let noticeKinds = "(" + DeliveryJob.Kind.threaded.sorted().map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")"

    /// SQL: a message of the streak of `user` whose alert is dated `date` to `contact` on `channel`
    /// bounced for good as a dead address (docs/bounces.md), so the notices of that streak no
    /// longer go to it on that channel — one whose messages bounce (`$bounce_channels`: mail); an
    /// app's event is about the user, not one address. A bounce of another class (a full mailbox,
    /// a spam block) stops nothing: the contact stays in use. One probe of the delivery key's
    /// index (the streak's messages share the alert's date).
    package static func bounced(user: String, date: String, contact: String, channel: String) -> String {
        """
        (\(channel) = ANY($bounce_channels::text[])
         AND EXISTS (SELECT 1 FROM notification_logs b
                     WHERE b.user_id = \(user) AND b.notification_date = \(date) AND b.channel = \(channel)
                       AND b.contact = \(contact) AND \(deadAddress("b"))))
        """
    }

    /// SQL: the row `n` bounced as a dead address (`BounceClass.noSuchAddress`); a row bounced
    /// before migration 032 has no class and was applied as one, so it still counts as one.
    package static func deadAddress(_ n: String) -> String {
        "\(n).status = 'bounced' AND coalesce(\(n).bounce_class, '\(BounceClass.noSuchAddress.rawValue)') = '\(BounceClass.noSuchAddress.rawValue)'"
    }

    /// The `contact.undeliverable` events due now (docs/bounces.md): one per mail that bounced for
    /// good as a dead address (`deadAddress`; a full mailbox or a spam block owes none) since
    /// `since` (its first report's time), streak and contact — keyed by the bounced
    /// mail's date and its contact — unless its row is sent, failed for good, in flight or waiting
    /// for its retry (a retry comes from here when its time comes, with the bounce it reports).
    /// The bounce and this event's row are the same commit's work: the bounced row is what makes
    /// the event due, so nothing is lost between them. Reads only: the report events' time index,
    /// then one probe per bounce. One event on each of `channels` (the app's channels that carry it).
    package func dueUndeliverable(_ db: PGConnection, since: Date, channels: [DeliveryJob.Channel],
                                  onlyUsers: [String]? = nil) throws -> [Due] {
        guard !channels.isEmpty else { return [] }
        return try owed(db, SQLStatement("""
            SELECT DISTINCT ON (n.user_id, n.notification_date, n.contact, w.channel)
                   n.user_id::text AS user_id, u.name, n.contact, n.notification_date, n.consecutive_miss_days AS miss,
                   n.last_check_in_date AS last, w.channel, n.kind AS bounced_kind, n.message_id AS bounced_message_id,
                   e.status_code, e.diagnostic, extract(epoch FROM e.received_at) AS bounced_epoch
            FROM sileme.bounce_events e
            JOIN notification_logs n ON n.id = e.log_id AND \(Self.deadAddress("n")) AND n.channel = ANY($bounce_channels::text[])
                                    AND n.contact <> ''
            JOIN users u ON u.id = n.user_id
            CROSS JOIN unnest($channels::text[]) AS w(channel)
            WHERE e.kind = 'permanent' AND e.received_at >= to_timestamp($since::float8)
              AND ($user_ids::uuid[] IS NULL OR n.user_id = ANY($user_ids::uuid[]))
              AND \(noSettledRow(user: "n.user_id", date: "n.notification_date", kind: "'undeliverable'", contact: "n.contact",
                                 channel: "w.channel"))
            ORDER BY n.user_id, n.notification_date, n.contact, w.channel, e.received_at
            """), [
            "since": String(since.timeIntervalSince1970), "user_ids": onlyUsers.map { PGArray.literal($0) },
            "channels": ChannelSQL.literal(channels),
        ]) { row in
            var due = Due(row, kind: .undeliverable)
            if let kind = row.string("bounced_kind").flatMap(DeliveryJob.Kind.init(rawValue:)),
               let epoch = row.string("bounced_epoch").flatMap(Double.init) {
                due?.bounce = DeliveryJob.Bounce(kind: kind, messageID: row.string("bounced_message_id"), status: row.string("status_code"),
                                                 diagnostic: row.string("diagnostic"), at: Date(timeIntervalSince1970: epoch))
            }
            return due
        }
    }

    /// How far back `due` looks for bounces whose event is owed: the event goes out within
    /// seconds of the report, and a retry waits at most hours; a week covers a webhook endpoint
    /// that was down for days.
    package static let undeliverableWindow: TimeInterval = 7 * 86_400

    /// SQL: a contact acknowledged the streak of `user` whose alert is dated `alertDate` (one
    /// primary-key probe of `sileme.acknowledgements`).
    package static func acknowledged(user: String, alertDate: String) -> String {
        "EXISTS (SELECT 1 FROM sileme.acknowledgements k WHERE k.user_id = \(user) AND k.alert_date = \(alertDate))"
    }

    /// How far back `due` looks for acknowledged streaks: an acknowledgement can be made only while
    /// its link works (30 days from the streak's start), so 40 days of alerts cover every one.
    package static func acknowledgementWindow(runDate: CalendarDate) -> CalendarDate { runDate.adding(days: -40) }

    /// The introductions due on `runDate`: pairs first seen since the lifecycle was migrated
    /// (`known_contacts.state = 'pending'`) whose contact is still in force (a row of
    /// `emergency_contacts`, or `users.emergency_email` for a user without any) and whose user
    /// has checked in at least once (the first check-in is the user's consent), oldest first,
    /// at most `limit` (a pair no longer in force is left out; the run records it with
    /// `settleIntroductions`) — on each contact's channel of `channels`. With an app's channel
    /// among `channels`, each such pair also gets its `contact.introduction` event there, once:
    /// unless the pair has an introduction row of any day on it (an unfinished one is
    /// `unfinishedEvents`' to finish).
    package func dueIntroductions(_ db: PGConnection, runDate: CalendarDate, limit: Int = 5000,
                                 channels: [DeliveryJob.Channel] = DeliveryJob.Channel.of(.contacts),
                                 onlyUsers: [String]? = nil) throws -> [Due] {
        return try owedMany(db, SQLStatement("""
            SELECT k.user_id::text AS user_id, u.name, f.email AS contact, f.position, s.last_check_in_date AS last, m.channel,
                   array_to_string(ARRAY(SELECT w.channel FROM notification_logs w
                                         WHERE w.user_id = k.user_id AND w.kind = 'introduction'
                                           AND w.channel = ANY($app_channels::text[]) AND w.contact = k.contact), ',') AS told_apps
            FROM sileme.known_contacts k
            CROSS JOIN unnest($channels::text[]) AS m(channel)
            JOIN users u ON u.id = k.user_id
            -- One probe of the summary per pending contact (OFFSET 0 keeps the planner from joining
            -- the whole summary: with 200 pending contacts at a million users it hashed every
            -- user's row, 0.4 s at each run, and a run comes at every user's own instant).
            CROSS JOIN LATERAL (SELECT s.last_check_in_date FROM \(CheckInQueue.currentSummary) s
                                WHERE s.user_id = k.user_id OFFSET 0) s
            CROSS JOIN LATERAL (
                SELECT e.email, e.position FROM emergency_contacts e
                WHERE e.user_id = k.user_id AND lower(btrim(e.email)) = k.contact
                UNION ALL
                SELECT u.emergency_email, 1
                WHERE lower(btrim(u.emergency_email)) = k.contact
                  AND NOT EXISTS (SELECT 1 FROM emergency_contacts e WHERE e.user_id = k.user_id)
                LIMIT 1) f
            WHERE k.state = 'pending' AND ($user_ids::uuid[] IS NULL OR k.user_id = ANY($user_ids::uuid[]))
              AND m.channel = ANY($contact_channels::text[])
              AND \(noSettledRow(user: "k.user_id", date: "$run_date::date", kind: "'introduction'", contact: "k.contact",
                                 channel: "m.channel"))
            ORDER BY k.first_seen, k.user_id, k.contact, m.channel
            LIMIT $limit
            """), [
            "run_date": runDate.description, "limit": String(limit), "user_ids": onlyUsers.map { PGArray.literal($0) },
            "channels": ChannelSQL.literal(channels),
        ]) { row -> [Due] in
            guard let due = Due(row, kind: .introduction) else { return [] }
            let told = Set((row.string("told_apps") ?? "").split(separator: ",").map(String.init))
            return [due] + channels.filter { $0.audience == .app && !told.contains($0.rawValue) }.map { app in
                var event = due
                event.channel = app
                return event
            }
        }
    }

    /// The reminders due on `runDate` (`USER_REMINDER`, on the app's channels of `channels`):
    /// users on their first missed day — `L' = D - 2`, counted from the last check-in or from the
    /// end of a pause — unless their reminder of the day is settled. Two index range scans (the
    /// summary's date, the pauses' end).
    package func dueReminders(_ db: PGConnection, runDate: CalendarDate, channels: [DeliveryJob.Channel], onlyUsers: [String]? = nil,
                             slots: [String]? = nil) throws -> [Due] {
        guard !channels.isEmpty else { return [] }
        return try owed(db, SQLStatement("""
            SELECT r.user_id::text AS user_id, u.name, '' AS contact, r.last, w.channel
            FROM (SELECT s.user_id, s.last_check_in_date AS last FROM \(CheckInQueue.currentSummary) s
                  WHERE s.last_check_in_date = $run_date::date - 2 AND \(SlotSQL.summaryFilter("s"))
                  UNION ALL
                  SELECT p.id, s.last_check_in_date FROM users p
                  JOIN \(CheckInQueue.currentSummary) s ON s.user_id = p.id AND s.last_check_in_date < $run_date::date - 2
                  WHERE p.paused_until = $run_date::date - 2) r
            JOIN users u ON u.id = r.user_id
            CROSS JOIN unnest($channels::text[]) AS w(channel)
            WHERE (u.paused_until IS NULL OR u.paused_until <= $run_date::date - 2) AND w.channel = ANY($app_channels::text[])
              AND ($user_ids::uuid[] IS NULL OR r.user_id = ANY($user_ids::uuid[])) AND \(SlotSQL.filter("u"))
              AND \(noSettledRow(user: "r.user_id", date: "$run_date::date", kind: "'reminder'", contact: "''", channel: "w.channel"))
            ORDER BY r.user_id, w.channel
            """), ["run_date": runDate.description, "user_ids": onlyUsers.map { PGArray.literal($0) }, "slots": SlotSQL.bind(slots),
                   "channels": ChannelSQL.literal(channels)])
            { Due($0, kind: .reminder, missedDays: 1) }
    }

    /// The app's events to finish (on `$app_channels`), of `kinds`: rows waiting for their retry time that has come,
    /// or claims a crashed process left — an alert dated within the due window (from `oldest`), a
    /// reminder of `runDate` only (later it is moot), an all-clear, a follow-up or an introduction
    /// of any date. Each comes back with its row's date, so the same row is claimed again with its
    /// `webhook-id`. The open rows' partial index keeps this a small read.
    package func unfinishedEvents(_ db: PGConnection, runDate: CalendarDate, oldest: CalendarDate,
                                   kinds: Set<DeliveryJob.Kind>, onlyUsers: [String]? = nil, slots: [String]? = nil) throws -> [Due] {
        guard !kinds.isEmpty else { return [] }
        return try owed(db, SQLStatement("""
            SELECT x.user_id::text AS user_id, u.name, x.contact, x.notification_date, x.in_reply_to,
                   x.consecutive_miss_days AS miss, x.last_check_in_date AS last, x.kind, x.channel,
                   CASE WHEN x.kind = 'all_clear' THEN x.event_at::date END AS checked_in_date,
                   extract(epoch FROM x.event_at) AS checked_in_epoch,
                   CASE WHEN x.kind = 'alert' AND u.paused_until > x.last_check_in_date AND u.paused_until < x.notification_date
                        THEN u.paused_until END AS paused_until
            FROM notification_logs x
            JOIN users u ON u.id = x.user_id
            WHERE x.status IN ('sending', 'retry') AND x.channel = ANY($app_channels::text[]) AND NOT x.email_sent
              AND x.kind = ANY($kinds::text[])
              AND \(claimSQL.unfinished("x"))
              AND (x.kind <> 'alert' OR x.notification_date >= $oldest::date)
              AND (x.kind <> 'reminder' OR x.notification_date = $run_date::date)
              AND ($user_ids::uuid[] IS NULL OR x.user_id = ANY($user_ids::uuid[]))
              -- Introductions and all-clears come at once, whatever the user's own time.
              AND (x.kind IN ('introduction', 'all_clear') OR \(SlotSQL.filter("u")))
            ORDER BY x.notification_date, x.user_id, x.kind, x.contact
            """), [
            "run_date": runDate.description, "oldest": oldest.description,
            "kinds": PGArray.literal(kinds.map(\.rawValue).sorted()), "user_ids": onlyUsers.map { PGArray.literal($0) },
            "slots": SlotSQL.bind(slots),
        ]) { Due($0) }
    }

    /// The user's contacts in force of each of `userIDs` as stored: the rows of
    /// `emergency_contacts` (at most 5, by position), else `users.emergency_email` — what a
    /// webhook event lists as `contacts`. One statement.
    package func contacts(_ db: PGConnection, of userIDs: [String]) throws -> [String: [Candidate.RawContact]] {
        guard !userIDs.isEmpty else { return [:] }
        var found: [String: [Candidate.RawContact]] = [:]
        for row in try db.execute(SQLStatement("""
            SELECT u.id::text AS id, u.emergency_email, c.contacts FROM users u
            LEFT JOIN LATERAL (\(GuardSQL.contacts("u"))) c ON true
            WHERE u.id = ANY($user_ids::uuid[])
            """), ["user_ids": PGArray.literal(Array(Set(userIDs)).sorted())]).rows {
            guard let user = row.string("id") else { continue }
            let listed = GuardSQL.contacts(row)
            found[user] = listed.isEmpty ? [Candidate.RawContact(email: row.string("emergency_email"), position: 1)] : listed
        }
        return found
    }

    /// The languages the rows name for each of `userIDs` (docs/languages.md): `users.language`, and
    /// `emergency_contacts.language` by address (trimmed, lower-cased, as the delivery key holds
    /// it). Users whose rows name none are left out. One statement.
    package func languages(_ db: PGConnection, of userIDs: [String]) throws -> [String: (user: String?, contacts: [String: String])] {
        guard !userIDs.isEmpty else { return [:] }
        var found: [String: (user: String?, contacts: [String: String])] = [:]
        for row in try db.execute(SQLStatement("""
            SELECT u.id::text AS id, u.language,
                   (SELECT json_object_agg(lower(btrim(e.email)), e.language) FROM emergency_contacts e
                    WHERE e.user_id = u.id AND e.language IS NOT NULL)::text AS contacts
            FROM users u
            WHERE u.id = ANY($user_ids::uuid[])
              AND (u.language IS NOT NULL OR EXISTS (SELECT 1 FROM emergency_contacts e WHERE e.user_id = u.id AND e.language IS NOT NULL))
            """), ["user_ids": PGArray.literal(Array(Set(userIDs)).sorted())]).rows {
            guard let user = row.string("id") else { continue }
            let contacts = row.string("contacts").flatMap { $0.data(using: .utf8) }
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: String] } ?? [:]
            found[user] = (row.string("language"), contacts)
        }
        return found
    }

    /// What a run decided about introductions, written down: pending pairs no longer in force,
    /// and the pairs of `unusable` (their address is not usable), are marked `not_introduced`; with
    /// `INTRODUCE_CONTACTS=off`, a run of everyone's day (`wholeDay`) marks every pending pair so
    /// (turning it on later introduces only the pairs seen after that). Returns how many pairs
    /// it marked.
    @discardableResult
    package func settleIntroductions(_ db: PGConnection, introduceContacts: Bool, wholeDay: Bool,
                                    unusable: [(user: String, contact: String)]) throws -> Int {
        var marked = 0
        if introduceContacts {
            marked += try db.execute("""
                UPDATE sileme.known_contacts k SET state = 'not_introduced', updated_at = now()
                WHERE k.state = 'pending' AND NOT \(GuardSQL.contactInForce(user: "k.user_id", contact: "k.contact"))
                """).affectedRows
        } else if wholeDay {
            marked += try db.execute("""
                UPDATE sileme.known_contacts SET state = 'not_introduced', updated_at = now() WHERE state = 'pending'
                """).affectedRows
        }
        if !unusable.isEmpty {
            marked += try db.execute(SQLStatement("""
                UPDATE sileme.known_contacts k SET state = 'not_introduced', updated_at = now()
                FROM unnest($user_ids::uuid[], $contacts::text[]) AS p(user_id, contact)
                WHERE k.user_id = p.user_id AND k.contact = lower(btrim(p.contact)) AND k.state = 'pending'
                """), ["user_ids": PGArray.literal(unusable.map(\.user)), "contacts": PGArray.literal(unusable.map(\.contact))]).affectedRows
        }
        return marked
    }

    /// `sileme-notifier introduce --existing`: the pairs recorded as known when the lifecycle was
    /// first migrated (and those marked `not_introduced`, with `includeSkipped`) become pending, so
    /// the next run introduces them. Returns how many.
    @discardableResult
    package func introduceExisting(_ db: PGConnection, includeSkipped: Bool) throws -> Int {
        try db.execute(SQLStatement("""
            WITH done AS (UPDATE sileme.known_contacts SET state = 'pending', updated_at = now()
                          WHERE state = 'existing' OR ($include_skipped::bool AND state = 'not_introduced') RETURNING 1)
            SELECT count(*) AS introduced FROM done
            """), ["include_skipped": includeSkipped ? "true" : "false"])[0].int("introduced") ?? 0
    }

    /// How far back the all-clear sweep looks for accepted alerts whose user checked in since:
    /// the alerts of `runDate` and the day before (an alert accepted after the check-in came; the
    /// check-in trigger's queue covers every other streak, whenever it ended).
    package static func sweepStart(runDate: CalendarDate) -> CalendarDate { runDate.adding(days: -1) }

    /// Every message of `kinds` owed on `runDate` besides the rule's new alerts, in the order a run
    /// sends them: introductions (`INTRODUCE_CONTACTS`), unfinished alerts, all-clears, follow-ups
    /// (`FOLLOW_UP_DAYS`), reminders (`USER_REMINDER`), what the streaks' answers owe — "I'm on
    /// it", an escalation, an outcome (`dueStreakNotices`) —, undeliverable contacts
    /// (docs/bounces.md), then the app's events to finish — each on the channels that carry its
    /// kind (`MessageSettings.channels(for:)`). The one selection of the real run and of the
    /// dry run. Reads only, in one transaction. `slots` limits the messages that come at the
    /// user's slot's instant (alerts, follow-ups, reminders) to the users of those slots. A store
    /// with `pages` hands them to its pages instead (the last page before the transaction ends)
    /// and returns none.
    package func due(_ db: PGConnection, messages: MessageSettings, runDate: CalendarDate,
                    kinds: Set<DeliveryJob.Kind>, onlyUsers: [String]? = nil, slots: [String]? = nil) throws -> [Due] {
        let rule = messages.rule
        // The kinds an app's channel sends (whose retries `unfinishedEvents` finds).
        let hooked = kinds.filter { messages.channels(for: $0).contains { $0.audience == .app } }
        // JIT compilation off, as for the due set: at a large service these statements' estimates
        // pass the server's jit_above_cost while each is a few index probes per row (the
        // all-clears' read of 16,000 recent alerts spent 45 ms of its 150 ms compiling).
        return try db.withLocalSettings([("jit", "off")]) {
            var due: [Due] = []
            let oldest = runDate.adding(days: -rule.catchUpDays)
            let introduce = kinds.contains(.introduction) && messages.introduceContacts
            let open = introduce || kinds.contains(.alert)
                ? try openWork(db, oldest: oldest, runDate: runDate) : (introductions: false, unfinishedAlerts: false)
            if introduce && open.introductions {
                due += try dueIntroductions(db, runDate: runDate, channels: messages.channels(for: .introduction), onlyUsers: onlyUsers)
            }
            if kinds.contains(.alert) && open.unfinishedAlerts {
                due += try unfinishedAlerts(db, runDate: runDate, oldest: oldest, onlyUsers: onlyUsers, slots: slots)
            }
            if kinds.contains(.allClear) {
                due += try dueAllClears(db, windowStart: Self.sweepStart(runDate: runDate), latestTrusted: runDate.adding(days: 1),
                                        channels: messages.channels(for: .allClear), onlyUsers: onlyUsers)
            }
            if kinds.contains(.followUp) {
                due += try dueFollowUps(db, runDate: runDate, days: messages.followUpDays, catchUpDays: rule.catchUpDays,
                                        channels: messages.channels(for: .followUp), onlyUsers: onlyUsers, slots: slots)
            }
            if kinds.contains(.reminder) && messages.userReminder && rule.thresholdDays >= 2 {
                due += try dueReminders(db, runDate: runDate, channels: messages.channels(for: .reminder), onlyUsers: onlyUsers,
                                        slots: slots)
            }
            if !kinds.isDisjoint(with: Self.answerKinds) {
                // The second tier's alerts are the escalation's own: they come with its kind.
                due += try dueStreakNotices(db, oldest: Self.acknowledgementWindow(runDate: runDate), kinds: kinds, messages: messages,
                                            firstAlerts: kinds.contains(.escalation), onlyUsers: onlyUsers)
            }
            if kinds.contains(.undeliverable) {
                due += try dueUndeliverable(db, since: Date().addingTimeInterval(-Self.undeliverableWindow),
                                            channels: messages.channels(for: .undeliverable), onlyUsers: onlyUsers)
            }
            // The answers' and the undeliverable events' retries come from their own queries (which
            // name who acknowledged, which streak escalated, who said how it ended, what bounced).
            due += try unfinishedEvents(db, runDate: runDate, oldest: oldest,
                                        kinds: hooked.subtracting(Self.answerKinds.union([.undeliverable])), onlyUsers: onlyUsers,
                                        slots: slots)
            try pages?.flush()
            return due
        }
    }
}

extension LifecycleStore.Due {
    /// A row of one of the owed-message queries, read by column name: `user_id`, `name`,
    /// `contact` and `last` always; `kind`, `channel`, `notification_date`, `in_reply_to`, `miss`,
    /// `position`, `checked_in_date` with `checked_in_epoch`, and `paused_until` where the query
    /// has them (`kind`, `channel` and `missedDays` given here when it has not). Nil for a row
    /// without a user, contact, `L` or known kind.
    init?(_ row: PGRow, kind: DeliveryJob.Kind? = nil, channel: DeliveryJob.Channel? = nil, missedDays: Int? = nil) {
        func optional<T>(_ name: String, _ read: (String) -> T?) -> T? { row.hasColumn(name) ? read(name) : nil }
        guard let user = row.string("user_id"), let contact = row.string("contact"), let last = row.date("last"),
              let kind = kind ?? optional("kind", { DeliveryJob.Kind(rawValue: row.string($0) ?? "") }) else { return nil }
        let checkedIn = optional("checked_in_date", row.date).map { date in
            (Date(timeIntervalSince1970: optional("checked_in_epoch", row.string).flatMap(Double.init) ?? Date().timeIntervalSince1970), date)
        }
        self.init(kind: kind, userID: user, rawName: row.string("name"), contact: contact,
                  position: optional("position", row.int) ?? 1, notificationDate: optional("notification_date", row.date),
                  inReplyTo: optional("in_reply_to", row.string), missedDays: missedDays ?? optional("miss", row.int) ?? 0,
                  lastCheckIn: last, checkedIn: checkedIn,
                  channel: channel ?? optional("channel", { DeliveryJob.Channel(rawValue: row.string($0) ?? "") }) ?? .email,
                  pausedUntil: optional("paused_until", row.date))
    }
}

