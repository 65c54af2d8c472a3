import Foundation
import Values

/// What the notifier reads back about itself for operators: the figures of the metrics file, and
/// the deletion of rows past `RETENTION_DAYS`.
package enum Housekeeping {
    /// The latest run, the latest completed run and the retry backlog, as the database has them
    /// (whichever process ran: the daemon, a timer's `--run-now`, `retry`).
    package struct Figures: Sendable {
        /// The latest run: its date, mode, status, start and end (epoch seconds), and tally.
        package var lastRun: (date: String, mode: String, status: String, started: Double, finished: Double?, tally: RunTally)?
        /// When the latest completed run (not `retry`) finished, epoch seconds.
        package var lastSuccess: Double?
        /// Rows of the open days waiting for a retry (`retry`), failed for good (`failed`) and
        /// claimed but not finished (`sending`).
        package var backlog: [String: Int] = [:]
        /// The alerts held over an intake gap now (docs/intake-hold.md).
        package var held = HoldStore.Open()
        /// Every acknowledgement recorded (a contact said "I'm on it"), a counter.
        package var acknowledgements = 0
        /// The bounce reader's record (docs/bounces.md); nil before its first recorded poll.
        package var bounces: BounceStore.MailboxRecord?
        /// Escalation's steps made and the escalated streaks not heard now (docs/escalation.md).
        package var escalation = EscalationFigures()
        /// Each relay's counts (`sileme.relay_counts`): the mail it accepted, the messages that
        /// passed it over; by relay URL.
        package var relays: [String: (accepted: Int, passedOver: Int)] = [:]
        /// Each relay's canaries (`sileme.canaries`, docs/operating.md "The canary"); empty when none was sent.
        package var canaries: [CanaryStore.Figures] = []

        /// No run yet.
        package init() {}
    }

    /// Reads the figures; the backlog covers the notification dates since `since` (the days a
    /// mail may still go out). The latest run is the latest that decided (a daemon that joined
    /// another's sending counts in the history, not here).
    package static func figures(_ db: PGConnection, since: CalendarDate) throws -> Figures {
        var figures = Figures()
        let runs = try db.execute("""
            SELECT run_date::text, mode, status, extract(epoch FROM started_at) AS started, extract(epoch FROM finished_at) AS finished,
                   \(RunTally.storedFields.compactMap(\.column).joined(separator: ", ")),
                   (SELECT extract(epoch FROM max(finished_at)) FROM sileme.notifier_runs
                    WHERE status = 'completed' AND mode NOT IN ('retry', 'daemon-join')) AS last_success
            FROM sileme.notifier_runs WHERE mode <> 'daemon-join' ORDER BY started_at DESC, id DESC LIMIT 1
            """)
        if runs.count == 1 {
            let row = runs[0]
            figures.lastRun = (row.string("run_date") ?? "", row.string("mode") ?? "", row.string("status") ?? "",
                               Double(row.string("started") ?? "") ?? 0, row.string("finished").flatMap(Double.init),
                               RunTally(stored: row))
            figures.lastSuccess = row.string("last_success").flatMap(Double.init)
        }
        figures.held = try HoldStore.open(db)
        for status in ["retry", "failed", "sending"] { figures.backlog[status] = 0 }
        for row in try db.execute(SQLStatement("""
            SELECT status, count(*) AS rows FROM notification_logs
            WHERE notification_date >= $since::date AND NOT email_sent AND status IN ('retry', 'failed', 'sending')
            GROUP BY status
            """), ["since": since.description]).rows {
            if let status = row.string("status") { figures.backlog[status] = row.int("rows") ?? 0 }
        }
        figures.acknowledgements = try db.execute("SELECT count(*) AS acknowledgements FROM sileme.acknowledgements")[0]
            .int("acknowledgements") ?? 0
        figures.bounces = try BounceStore.mailboxRecord(db)
        figures.escalation = try EscalationFigures.read(db)
        for row in try db.execute("SELECT relay, accepted, passed_over FROM sileme.relay_counts").rows {
            if let relay = row.string("relay") { figures.relays[relay] = (row.int("accepted") ?? 0, row.int("passed_over") ?? 0) }
        }
        figures.canaries = try CanaryStore.figures(db)
        return figures
    }

    /// How long past the retention cutoff a streak still waiting for an escalation step is kept:
    /// both steps come within twice the longest `ESCALATE_AFTER` (10 days) of the alert.
    package static let escalationGraceDays = 21

    /// Deletes `notification_logs` rows dated before `cutoff`, `notifier_runs` rows of run dates
    /// before it and the streaks of `sileme.escalations` whose alert is dated before it (their
    /// alerts are gone with the rows), `batch` rows per statement (each its own short transaction,
    /// so a check-in insert never waits long behind it), until none is left or `stop` is raised.
    /// A streak still waiting for a step is kept until the step is made — a short `RETENTION_DAYS`
    /// with a long `ESCALATE_AFTER` must not silence it — but not past `escalationGraceDays`
    /// after the cutoff (with escalation turned off, no step ever comes). Returns the rows deleted
    /// from each table.
    package static func deleteOlder(_ db: PGConnection, than cutoff: CalendarDate, batch: Int = 500,
                                   stop: StopSignal? = nil) throws -> (logs: Int, runs: Int, escalations: Int) {
        var deleted = (logs: 0, runs: 0, escalations: 0)
        // Each table by its date index, oldest first; the streaks have no `id`: their primary key.
        let tables: [(table: String, column: String, key: [String], also: String)] = [
            ("notification_logs", "notification_date", ["id"], ""), ("sileme.notifier_runs", "run_date", ["id"], ""),
            ("sileme.escalations", "alert_date", ["user_id", "alert_date"],
             "AND (stage NOT IN ('alerted', 'escalated') OR alert_date < $cutoff::date - \(escalationGraceDays))"),
        ]
        for (table, column, key, also) in tables {
            let keys = key.joined(separator: ", ")
            let match = key.map { "t.\($0) = old.\($0)" }.joined(separator: " AND ")
            while stop?.isStopped != true {
                let count = try db.execute(SQLStatement("""
                    WITH old AS (SELECT \(keys) FROM \(table) WHERE \(column) < $cutoff::date \(also) ORDER BY \(column) LIMIT $batch)
                    DELETE FROM \(table) t USING old WHERE \(match)
                    """), ["cutoff": cutoff.description, "batch": String(batch)]).affectedRows
                switch table {
                case "notification_logs": deleted.logs += count
                case "sileme.notifier_runs": deleted.runs += count
                default: deleted.escalations += count
                }
                if count < batch { break }
            }
        }
        return deleted
    }
}
