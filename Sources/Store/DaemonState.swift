import Foundation
import Values

/// What the runs table and `notification_logs` say about one run date, for the scheduler.
package struct DaemonState {
    /// A run for the date completed (daemon, timer or by hand).
    package let completed: Bool
    /// A run for the date started (and did not complete: it failed or was interrupted).
    package let started: Bool
    /// When the earliest transient failure of the date is due again (now, for an abandoned claim;
    /// when its lease runs out, for a claim made through a pooler); nil when nothing waits for a retry.
    package let nextRetry: Date?

    package static func read(_ db: PGConnection, runDate: CalendarDate, claims: ClaimSQL) throws -> DaemonState {
        let row = try db.execute("""
            SELECT EXISTS (SELECT 1 FROM sileme.notifier_runs WHERE run_date = $1 AND status = 'completed' AND mode <> 'retry'),
                   EXISTS (SELECT 1 FROM sileme.notifier_runs WHERE run_date = $1 AND mode <> 'retry'),
                   (SELECT extract(epoch FROM min(CASE WHEN n.status = 'retry' THEN coalesce(n.next_attempt_at, now())
                                                       ELSE \(claims.takeoverTime("n")) END))
                    FROM notification_logs n
                    WHERE n.notification_date = $1 AND NOT n.email_sent AND n.status IN ('retry', 'sending'))
            """, [runDate.description])[0]
        return DaemonState(completed: row.bool(0), started: row.bool(1),
                           nextRetry: row.string(2).flatMap(Double.init).map { Date(timeIntervalSince1970: $0) })
    }

    /// Creates the value.
    package init(completed: Bool, started: Bool, nextRetry: Date? = nil) {
        self.completed = completed
        self.started = started
        self.nextRetry = nextRetry
    }
}
