import Foundation
import Values

/// What the runs table and `notification_logs` say about the run dates the users are on now, for
/// the scheduler: which slots each date's runs served (docs/user-time.md), and when failed
/// messages are due again.
package struct DaemonState: Equatable {
    /// The slots some runs of a date served: everyone (a run without a slot filter: `--date`, a
    /// run of an instant at which everyone was on one date, any run before migration 014), or these keys.
    package struct Coverage: Equatable, Sendable {
        /// A run served everyone.
        package var everyone = false
        /// The slots runs served, when none served everyone.
        package var keys: Set<String> = []

        /// Every slot.
        package static let all = Coverage(everyone: true)
        /// Some slots.
        package static func only(_ keys: Set<String>) -> Coverage { Coverage(keys: keys) }

        /// Whether slot `key` was served.
        package func covers(_ key: String) -> Bool { everyone || keys.contains(key) }

        /// Adds a run's slots (nil: everyone).
        mutating func add(_ slots: [String]?) {
            if let slots { keys.formUnion(slots) } else { everyone = true }
        }
    }

    /// Per run date, the slots its completed runs served (daemon, timer or by hand; `retry` and the
    /// daemons that joined a run's sending aside).
    package let completed: [CalendarDate: Coverage]
    /// Per run date, the slots its runs started for (and did not complete: failed or interrupted).
    package let started: [CalendarDate: Coverage]
    /// When the earliest transient failure of those dates is due again (now, for an abandoned claim;
    /// when its lease runs out, for a claim made through a pooler); nil when nothing waits for a
    /// retry (a notice no longer owed to a contact whose mail bounced does not count).
    package let nextRetry: Date?
    /// When the first open hold ends (alerts held over an intake gap, docs/intake-hold.md); nil
    /// when none is held.
    package let nextRelease: Date?

    /// Reads the state of `dates` (the dates the users' latest notify instants are on: one to three).
    package static func read(_ db: PGConnection, dates: [CalendarDate], claims: ClaimSQL) throws -> DaemonState {
        let days = PGArray.literal(dates.map(\.description))
        var completed: [CalendarDate: Coverage] = [:], started: [CalendarDate: Coverage] = [:]
        for row in try db.execute(SQLStatement("""
            SELECT run_date, status = 'completed' AS completed, array_to_json(slots)::text AS slots FROM sileme.notifier_runs
            WHERE run_date = ANY($dates::date[]) AND mode NOT IN ('retry', 'daemon-join')
            """), ["dates": days]).rows {
            guard let date = row.date("run_date") else { continue }
            let slots = row.string("slots").flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) }
            if row.bool("completed") { completed[date, default: Coverage()].add(slots) } else { started[date, default: Coverage()].add(slots) }
        }
        let retry = try db.execute(SQLStatement(nextRetrySQL(claims: claims)), ["dates": days])[0]
        return DaemonState(completed: completed, started: started,
                           nextRetry: retry.string("next_retry").flatMap(Double.init).map { Date(timeIntervalSince1970: $0) },
                           nextRelease: try HoldStore.nextRelease(db))
    }

    /// SQL: when the earliest failed message of the dates `$dates` (a date array) is due again
    /// (`next_retry`, epoch seconds; NULL: none). The daemon asks it every minute: it reads the
    /// unfinished rows of those dates through `notification_logs_open_idx` (migration 030), not
    /// every row of the day, whatever the statistics know of the day yet.
    package static func nextRetrySQL(claims: ClaimSQL) -> String {
        """
        SELECT extract(epoch FROM min(CASE WHEN n.status = 'retry' THEN coalesce(n.next_attempt_at, now())
                                           ELSE \(claims.takeoverTime("n")) END)) AS next_retry
        FROM notification_logs n
        WHERE n.notification_date = ANY($dates::date[]) AND NOT n.email_sent AND n.status IN ('retry', 'sending')
          -- A notice to a contact whose mail of the streak bounced is no longer owed (docs/bounces.md):
          -- no pass would send it, so it wakes none.
          AND NOT (n.kind IN \(LifecycleStore.noticeKinds)
                   AND \(LifecycleStore.bounced(user: "n.user_id", date: "n.notification_date", contact: "n.contact", channel: "n.channel")))
        """
    }

    /// Creates the value.
    package init(completed: [CalendarDate: Coverage], started: [CalendarDate: Coverage] = [:], nextRetry: Date? = nil,
                 nextRelease: Date? = nil) {
        self.completed = completed
        self.started = started
        self.nextRetry = nextRetry
        self.nextRelease = nextRelease
    }
}
