import Config
import Foundation
import Rule
import Store
import Values

/// The dry run (`--run-now --dry-run`): evaluates every candidate exactly as a real run would, in
/// a read-only transaction, and hands each listed user to a report. Writes nothing, sends nothing.
public struct DryRun: Sendable {
    /// The configuration in force.
    public let configuration: NotifierConfiguration
    /// `D`.
    public let runDate: CalendarDate

    /// Creates the dry run for `runDate`.
    public init(configuration: NotifierConfiguration, runDate: CalendarDate) {
        self.configuration = configuration
        self.runDate = runDate
    }

    /// Evaluates and writes every listed user to `report`; returns the counts per decision.
    public func write(into report: any ReportSink) throws -> RunCounts {
        let db = try PGConnection(configuration.readDatabaseURL)
        try RowSecurity.verify(db)
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
            try report.lifecycle(try LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
                .due(db, configuration: configuration, runDate: runDate, kinds: Set(DeliveryJob.Kind.allCases), readOnly: true) + hooked)
            try report.end(counts)
        }
        return counts
    }
}
