import Config
import Foundation
import Rule
import Store
import Values

/// The dry run (`--run-now --dry-run`): evaluates every candidate exactly as a real run would, in
/// a read-only transaction, and hands each listed user to a report. Sends nothing and writes no
/// delivery state; like a run, it first folds the queued check-ins into the summary (what the
/// daemon does every second, `CheckInQueue`), or on a standby says how many it cannot see.
public struct DryRun: Sendable {
    /// The configuration in force.
    public let configuration: NotifierConfiguration
    /// `D`.
    public let runDate: CalendarDate
    /// Where a note for the operator goes (check-ins a standby has not folded).
    public let note: @Sendable (String) -> Void

    /// Creates the dry run for `runDate`.
    public init(configuration: NotifierConfiguration, runDate: CalendarDate, note: @escaping @Sendable (String) -> Void = { _ in }) {
        self.configuration = configuration
        self.runDate = runDate
        self.note = note
    }

    /// Evaluates and writes every listed user to `report`; returns the counts per decision.
    ///
    /// The report's other messages (all-clears, follow-ups, introductions, unfinished ones) are
    /// read meanwhile on a second read-only connection: like the stream's statements, each of
    /// those takes its own snapshot, so reading them alongside changes nothing but the time the
    /// report takes (at a million users their queries are a tenth of it).
    public func write(into report: any ReportSink) throws -> RunCounts {
        let db = try PGConnection(configuration, \.readDatabaseURL)
        try RowSecurity.verify(db)
        if let waiting = try CheckInQueue.prepareToRead(db) { note(waiting) }
        let lifecycle = otherMessages()
        var counts = RunCounts()
        try db.transaction(readOnly: true) {
            try report.begin(ReportHeader(runDate: runDate, timeZone: configuration.timeZone.identifier,
                                          thresholdDays: configuration.rule.thresholdDays,
                                          catchUpDays: configuration.rule.catchUpDays, dryRun: true))
            let store = NotificationStore(owner: "dry-run", claimLeaseSeconds: configuration.claimLeaseSeconds)
            // With the webhook on, each new alert's event too (one per user).
            var hooked: [LifecycleStore.Due] = []
            let hooksAlerts = configuration.webhookSends(.alert)
            try store.evaluate(db, runDate: runDate, rule: configuration.rule) { candidate, evaluation in
                counts.count(evaluation.decision)
                try report.row(ReportRow(candidate: candidate, evaluation: evaluation))
                if hooksAlerts && evaluation.decision == .send {
                    hooked.append(.webhookAlert(userID: candidate.userID, rawName: candidate.rawName,
                                                missedDays: evaluation.missedDays, lastCheckIn: candidate.lastCheckIn))
                }
            }
            counts.futureIgnored = try store.countFutureCheckIns(db, runDate: runDate, rule: configuration.rule)
            // What a run would send now besides the new alerts (the run's own selection, read only).
            try report.lifecycle(try lifecycle() + hooked)
            try report.end(counts)
        }
        return counts
    }

    /// Starts reading what a run would send now besides the new alerts, on its own thread and
    /// connection; the closure it returns waits for them and returns them, or throws what stopped it.
    private func otherMessages() -> () throws -> [LifecycleStore.Due] {
        let outcome = Locked<Result<[LifecycleStore.Due], any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let (configuration, runDate) = (configuration, runDate)
        let thread = Thread {
            defer { finished.signal() }
            let result = Result {
                let db = try PGConnection(configuration, \.readDatabaseURL)
                return try db.transaction(readOnly: true) {
                    try LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
                        .due(db, configuration: configuration, runDate: runDate, kinds: Set(DeliveryJob.Kind.allCases), readOnly: true)
                }
            }
            outcome.withLock { $0 = result }
        }
        thread.name = "sileme-dry-run-messages"
        thread.start()
        return {
            finished.wait()
            return try outcome.withLock { $0! }.get()
        }
    }
}
