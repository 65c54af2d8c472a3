import Foundation
import Store
import Values

/// One row of `notifier_runs`: a run of the daemon, a timer or `--run-now`, with its counts.
public struct RunRecord: Sendable, Equatable {
    /// `notifier_runs.id`.
    public let id: Int64
    /// The run date `D`.
    public let runDate: CalendarDate
    /// `daemon`, `run-now`, …
    public let mode: String
    /// The host it ran on.
    public let host: String
    /// When it started.
    public let startedAt: Date?
    /// When it finished; nil while running (or when its process died).
    public let finishedAt: Date?
    /// `running`, `completed` or `failed`.
    public let status: String
    /// Users due (decided `send`).
    public let due: Int?
    /// Mails accepted.
    public let sent: Int?
    /// Mails failed.
    public let failed: Int?
    /// Users already notified in their streak.
    public let alreadyNotified: Int?
    /// Users past the catch-up window.
    public let stale: Int?
    /// Users skipped for an unusable address.
    public let invalidEmail: Int?
    /// Users skipped for an empty name.
    public let invalidName: Int?
    /// Due users whose row another session held.
    public let busyElsewhere: Int?
    /// The run's error, when it failed (addresses masked unless full emails were asked for).
    public let error: String?
    /// Users superseded by a newer account (nil for runs of versions before the guards).
    public var superseded: Int? = nil
    /// Users away (`paused_until ≥ D`).
    public var paused: Int? = nil
    /// Due users whose claim found them no longer due (a check-in during the run).
    public var cancelled: Int? = nil
    /// Users with check-ins dated after `D + 1` (ignored).
    public var futureIgnored: Int? = nil

    /// The guards' counts in words (`2 superseded, 1 paused`), only those above zero; nil when none.
    public var guardsText: String? {
        RunCounts.guardsText(superseded: superseded, paused: paused, cancelled: cancelled, futureIgnored: futureIgnored)
    }

    /// Seconds from start to finish, when finished.
    public var durationSeconds: Double? {
        guard let startedAt, let finishedAt else { return nil }
        return finishedAt.timeIntervalSince(startedAt)
    }
}
