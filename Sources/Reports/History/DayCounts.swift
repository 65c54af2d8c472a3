import Values

/// What happened on one day (a run date `D`): the runs and the `notification_logs` rows dated `D`,
/// counted by delivery state. Also used for the totals of a period.
package struct DayCounts: Sendable, Equatable {
    /// The day; for totals, the first day of the period.
    package var date: CalendarDate
    /// Rows in `notifier_runs` for the day.
    package var runs = 0
    /// Of `runs`, the ones that completed.
    package var completedRuns = 0
    /// Of `runs`, the ones that failed (or were interrupted).
    package var failedRuns = 0
    /// Of `runs`, the ones still marked running (in progress, or their process died).
    package var runningRuns = 0
    /// Mails the server accepted: `status = 'sent'`, plus `legacySent`.
    package var sent = 0
    /// Permanent failures (`status = 'failed'`, 5xx), with the server's reply.
    package var failed = 0
    /// Transient failures waiting for their next attempt (`status = 'retry'`).
    package var retryPending = 0
    /// Claims not finished (`status = 'sending'`): in flight, or left by a crashed run.
    package var sending = 0
    /// Mails the server accepted whose report came back saying the mailbox is dead
    /// (`status = 'bounced'`, docs/bounces.md): not counted in `sent`.
    package var bounced = 0
    /// Users skipped for bad data (`status = 'skipped'`), with the reason in `last_error`.
    package var skipped = 0
    /// Rows from before the delivery-state migration (`status IS NULL`) whose `email_sent` is true
    /// (included in `sent`).
    package var legacySent = 0
    /// Rows from before the delivery-state migration whose `email_sent` is false.
    package var legacyNotSent = 0

    /// Zero counts for `date`.
    package init(date: CalendarDate) { self.date = date }

    /// Mails not delivered: failed, waiting for a retry, stuck in sending, or old rows not sent —
    /// the red part of the HTML report's bars.
    package var undelivered: Int { failed + bounced + retryPending + sending + legacyNotSent }

    /// Rows written before the delivery-state migration.
    package var legacy: Int { legacySent + legacyNotSent }

    /// All `notification_logs` rows of the day.
    package var rows: Int { sent + failed + bounced + retryPending + sending + skipped + legacyNotSent }

    /// Adds `other`'s counts to these (the date stays).
    package mutating func add(_ other: DayCounts) {
        runs += other.runs
        completedRuns += other.completedRuns
        failedRuns += other.failedRuns
        runningRuns += other.runningRuns
        sent += other.sent
        failed += other.failed
        bounced += other.bounced
        retryPending += other.retryPending
        sending += other.sending
        skipped += other.skipped
        legacySent += other.legacySent
        legacyNotSent += other.legacyNotSent
    }

    /// A note on the day's runs for people: `no run`, `run failed`, `running`, or empty when a run completed.
    package var runNote: String {
        if runs == 0 { return "no run" }
        if completedRuns > 0 { return "" }
        return runningRuns > 0 ? "running" : "run failed"
    }
}
