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
            try store.evaluate(db, runDate: runDate, rule: configuration.rule) { candidate, evaluation in
                counts.count(evaluation.decision)
                try report.row(ReportRow(candidate: candidate, evaluation: evaluation))
            }
            counts.futureIgnored = try store.countFutureCheckIns(db, runDate: runDate, rule: configuration.rule)
            try report.lifecycle(try lifecycle(db))
            try report.end(counts)
        }
        return counts
    }

    /// What a run would send now besides the new alerts — read only (see `Lifecycle` in Delivery,
    /// which turns the same rows into jobs): introductions first, then unfinished alerts,
    /// all-clears and follow-ups.
    private func lifecycle(_ db: PGConnection) throws -> [LifecycleStore.Due] {
        let store = LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
        let rule = configuration.rule
        var due: [LifecycleStore.Due] = []
        if configuration.introduceContacts { due += try store.dueIntroductions(db, runDate: runDate, readOnly: true) }
        due += try store.unfinishedAlerts(db, runDate: runDate, oldest: runDate.adding(days: -rule.catchUpDays))
        due += try store.dueAllClears(db, windowStart: runDate.adding(days: -1), latestTrusted: runDate.adding(days: 1))
        due += try store.dueFollowUps(db, runDate: runDate, days: configuration.followUpDays, catchUpDays: rule.catchUpDays)
        return due
    }
}
