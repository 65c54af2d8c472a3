import Foundation
import Values

/// What the notifier reads back about itself for operators: the figures of the metrics file, and
/// the deletion of rows past `RETENTION_DAYS`.
public enum Housekeeping {
    /// The latest run, the latest completed run and the retry backlog, as the database has them
    /// (whichever process ran: the daemon, a timer's `--run-now`, `retry`).
    public struct Figures: Sendable {
        /// The latest run: its date, mode, status, start and end (epoch seconds), and counts.
        public var lastRun: (date: String, mode: String, status: String, started: Double, finished: Double?, counts: RunCounts)?
        /// When the latest completed run (not `retry`) finished, epoch seconds.
        public var lastSuccess: Double?
        /// Rows of the open days waiting for a retry (`retry`), failed for good (`failed`) and
        /// claimed but not finished (`sending`).
        public var backlog: [String: Int] = [:]

        /// No run yet.
        public init() {}
    }

    /// Reads the figures; the backlog covers the notification dates since `since` (the days a
    /// mail may still go out).
    public static func figures(_ db: PGConnection, since: CalendarDate) throws -> Figures {
        var figures = Figures()
        let runs = try db.execute("""
            SELECT run_date::text, mode, status, extract(epoch FROM started_at), extract(epoch FROM finished_at),
                   coalesce(due, 0), coalesce(sent, 0), coalesce(failed, 0), coalesce(already_notified, 0), coalesce(stale, 0),
                   coalesce(invalid_email, 0), coalesce(invalid_name, 0), coalesce(busy_elsewhere, 0), coalesce(gone, 0),
                   coalesce(claim_errors, 0), coalesce(superseded, 0), coalesce(paused, 0), coalesce(cancelled, 0),
                   coalesce(future_ignored, 0),
                   (SELECT extract(epoch FROM max(finished_at)) FROM sileme.notifier_runs WHERE status = 'completed' AND mode <> 'retry')
            FROM sileme.notifier_runs ORDER BY started_at DESC, id DESC LIMIT 1
            """)
        if runs.count == 1 {
            let row = runs[0]
            var counts = RunCounts()
            counts.due = row.int(5) ?? 0
            counts.sent = row.int(6) ?? 0
            counts.failed = row.int(7) ?? 0
            counts.alreadyNotified = row.int(8) ?? 0
            counts.stale = row.int(9) ?? 0
            counts.invalidEmail = row.int(10) ?? 0
            counts.invalidName = row.int(11) ?? 0
            counts.busyElsewhere = row.int(12) ?? 0
            counts.gone = row.int(13) ?? 0
            counts.claimErrors = row.int(14) ?? 0
            counts.superseded = row.int(15) ?? 0
            counts.paused = row.int(16) ?? 0
            counts.cancelled = row.int(17) ?? 0
            counts.futureIgnored = row.int(18) ?? 0
            figures.lastRun = (row.string(0) ?? "", row.string(1) ?? "", row.string(2) ?? "",
                               Double(row.string(3) ?? "") ?? 0, row.string(4).flatMap(Double.init), counts)
            figures.lastSuccess = row.string(19).flatMap(Double.init)
        }
        for status in ["retry", "failed", "sending"] { figures.backlog[status] = 0 }
        for row in try db.execute("""
            SELECT status, count(*) FROM notification_logs
            WHERE notification_date >= $1::date AND NOT email_sent AND status IN ('retry', 'failed', 'sending')
            GROUP BY status
            """, [since.description]).rows {
            if let status = row.string(0) { figures.backlog[status] = row.int(1) ?? 0 }
        }
        return figures
    }

    /// Deletes `notification_logs` rows dated before `cutoff` and `notifier_runs` rows of run dates
    /// before it, `batch` rows per statement (each its own short transaction, so a check-in
    /// insert never waits long behind it), until none is left or `stop` is raised. Returns the
    /// rows deleted from each table.
    public static func deleteOlder(_ db: PGConnection, than cutoff: CalendarDate, batch: Int = 500,
                                   stop: StopSignal? = nil) throws -> (logs: Int, runs: Int) {
        var deleted = (logs: 0, runs: 0)
        for (table, column) in [("notification_logs", "notification_date"), ("sileme.notifier_runs", "run_date")] {
            while stop?.isStopped != true {
                let count = try db.execute("""
                    WITH old AS (SELECT id FROM \(table) WHERE \(column) < $1::date ORDER BY \(column) LIMIT $2)
                    DELETE FROM \(table) t USING old WHERE t.id = old.id
                    """, [cutoff.description, String(batch)]).affectedRows
                if table == "notification_logs" { deleted.logs += count } else { deleted.runs += count }
                if count < batch { break }
            }
        }
        return deleted
    }
}
