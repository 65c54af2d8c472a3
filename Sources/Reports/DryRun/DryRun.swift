import Config
import Delivery
import Foundation
import Rule
import Store
import Values

/// The dry run (`--run-now --dry-run`): reads the plan a real run would carry out — the same
/// `RunPlan`, with the users past the catch-up window listed too — in a read-only transaction,
/// and hands each listed user and each other message owed to a report. Sends nothing and writes
/// nothing (the plan reads the queued check-ins beside the summary rather than folding them), so
/// it is exact on a standby and as a role that may only read.
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

    /// Writes every listed user and every other message owed to `report`; returns the plan's tally.
    public func write(into report: any ReportSink) throws -> RunTally {
        let db = try PGConnection(configuration, \.readDatabaseURL)
        try RowSecurity.verify(db)
        return try db.transaction(readOnly: true) {
            try report.begin(ReportHeader(runDate: runDate, timeZone: configuration.timeZone.identifier,
                                          thresholdDays: configuration.rule.thresholdDays,
                                          catchUpDays: configuration.rule.catchUpDays, dryRun: true))
            // With the webhook on, each new alert's event too (one per user).
            var hooked: [LifecycleStore.Due] = []
            let hooksAlerts = configuration.webhookSends(.alert)
            // The other messages owed are read meanwhile on a second read-only connection.
            let plan = try RunPlan.read(db, configuration: configuration, runDate: runDate, scope: .day, includeStale: true,
                                        alongside: { [configuration] in try PGConnection(configuration, \.readDatabaseURL) }) { candidate, evaluation in
                try report.row(ReportRow(candidate: candidate, evaluation: evaluation))
                if hooksAlerts && evaluation.decision == .send {
                    hooked.append(.webhookAlert(userID: candidate.userID, rawName: candidate.rawName,
                                                missedDays: evaluation.missedDays, lastCheckIn: candidate.lastCheckIn))
                }
            }
            try report.lifecycle(plan.owed + hooked)
            try report.end(plan.tally)
            return plan.tally
        }
    }
}
