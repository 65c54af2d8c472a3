import Foundation
import Store
import Values

/// One row of `notifier_runs`: a run of the daemon, a timer or `--run-now`, with its tally as
/// stored (the counts of `RunTally.fields` that the history report lists).
package struct RunRecord: Sendable, Equatable {
    /// `notifier_runs.id`.
    package let id: Int64
    /// The run date `D`.
    package let runDate: CalendarDate
    /// `daemon`, `run-now`, …
    package let mode: String
    /// The host it ran on.
    package let host: String
    /// When it started.
    package let startedAt: Date?
    /// When it finished; nil while running (or when its process died).
    package let finishedAt: Date?
    /// `running`, `completed` or `failed`.
    package let status: String
    /// The run's error, when it failed (addresses masked unless full emails were asked for).
    package let error: String?
    /// The stored counts by `RunTally.Field.name`; a count the row has as NULL (a run still
    /// going, or one whose process died, or a count newer than the run's version) is absent.
    package let counts: [String: Int]

    /// The counts the history report lists, in order.
    package static var listedFields: [RunTally.Field] { RunTally.fields.filter(\.inHistory) }

    /// A run with `counts` by field name.
    package init(id: Int64, runDate: CalendarDate, mode: String, host: String, startedAt: Date?, finishedAt: Date?,
                status: String, error: String?, counts: [String: Int]) {
        (self.id, self.runDate, self.mode, self.host) = (id, runDate, mode, host)
        (self.startedAt, self.finishedAt, self.status, self.error, self.counts) = (startedAt, finishedAt, status, error, counts)
    }

    /// A run with the counts every version stored (the guards' counts nil: a run before them).
    package init(id: Int64, runDate: CalendarDate, mode: String, host: String, startedAt: Date?, finishedAt: Date?,
                status: String, due: Int?, sent: Int?, failed: Int?, alreadyNotified: Int?, stale: Int?,
                invalidEmail: Int?, invalidName: Int?, busyElsewhere: Int?, error: String?) {
        let given: [(String, Int?)] = [("due", due), ("sent", sent), ("failed", failed), ("already_notified", alreadyNotified),
                                       ("stale", stale), ("invalid_email", invalidEmail), ("invalid_name", invalidName),
                                       ("busy_elsewhere", busyElsewhere)]
        self.init(id: id, runDate: runDate, mode: mode, host: host, startedAt: startedAt, finishedAt: finishedAt,
                  status: status, error: error, counts: Dictionary(uniqueKeysWithValues: given.compactMap { name, value in value.map { (name, $0) } }))
    }

    /// Users due (decided `send`).
    package var due: Int? { counts["due"] }
    /// Mails accepted.
    package var sent: Int? { counts["sent"] }
    /// Mails failed.
    package var failed: Int? { counts["failed"] }
    /// Users already notified in their streak.
    package var alreadyNotified: Int? { counts["already_notified"] }
    /// Users past the catch-up window.
    package var stale: Int? { counts["stale"] }
    /// Users skipped for an unusable address.
    package var invalidEmail: Int? { counts["invalid_email"] }
    /// Users skipped for an empty name.
    package var invalidName: Int? { counts["invalid_name"] }
    /// Due users whose row another session held.
    package var busyElsewhere: Int? { counts["busy_elsewhere"] }

    /// The guards' counts in words (`2 superseded, 1 paused`), only those above zero; nil when none.
    package var guardsText: String? {
        RunTally.guardsText(superseded: counts["superseded"], paused: counts["paused"], cancelled: counts["cancelled"],
                            futureIgnored: counts["future_ignored"])
    }

    /// Seconds from start to finish, when finished.
    package var durationSeconds: Double? {
        guard let startedAt, let finishedAt else { return nil }
        return finishedAt.timeIntervalSince(startedAt)
    }
}
