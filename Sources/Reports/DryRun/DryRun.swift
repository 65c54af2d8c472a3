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
    /// `--date D` (everyone on `D`), or the instant (`--at`, or now) at which each user is on
    /// their own run date (docs/user-time.md).
    public let when: RunWhen
    /// Only the users whose days are counted in this zone (`--zone`), or everyone.
    public let zone: TimeZone?

    /// Creates the dry run of `when`, of the users counted in `zone` only when given.
    public init(configuration: NotifierConfiguration, when: RunWhen, zone: TimeZone? = nil) {
        self.configuration = configuration
        self.when = when
        self.zone = zone
    }

    /// Creates the dry run for `runDate`, every user on it.
    public init(configuration: NotifierConfiguration, runDate: CalendarDate) {
        self.init(configuration: configuration, when: .date(runDate))
    }

    /// The report's run date: the date given, or the service's own (`NOTIFY_TIME` in
    /// `NOTIFY_TIME_ZONE`) at the instant. Each row says its user's own.
    public var runDate: CalendarDate {
        switch when {
        case .date(let date): date
        case .instant(let instant): configuration.schedule.latestFire(atOrBefore: instant).date
        }
    }

    /// The dry run in words: `2026-01-13`, or the instant with the service's run date.
    public var described: String {
        switch when {
        case .date(let date): "\(date)"
        case .instant(let instant): "\(ISO8601DateFormatter().string(from: instant)) (\(runDate) in \(configuration.timeZone.identifier))"
        }
    }

    /// Writes every listed user and every other message owed to `report`; returns the plan's tally
    /// (of all the instant's run dates).
    public func write(into report: any ReportSink) throws -> RunTally {
        let db = try PGConnection(configuration, \.readDatabaseURL)
        try RowSecurity.verify(db)
        return try db.transaction(readOnly: true) {
            try report.begin(ReportHeader(runDate: runDate, timeZone: configuration.timeZone.identifier,
                                          thresholdDays: configuration.rule.thresholdDays,
                                          catchUpDays: configuration.rule.catchUpDays, dryRun: true))
            let (slots, dates) = try UserTimes.runDates(when, db, configuration: configuration, zone: zone)
            // Each row names the zone its user's days are counted in, for a --date run too.
            let known = try slots ?? SlotSQL.slots(db, service: configuration.schedule)
            let zones = Dictionary(known.slots.map { ($0.key, $0) }) { first, _ in first }
            var tally = RunTally()
            var owed: [LifecycleStore.Due] = []
            // With the webhook on, each new alert's event too (one per user).
            var hooked: [LifecycleStore.Due] = []
            let hooksAlerts = configuration.webhookSends(.alert)
            for (date, scope) in dates {
                // The other messages owed are read meanwhile on a second read-only connection.
                let plan = try RunPlan.read(db, configuration: configuration, runDate: date, scope: scope, includeStale: true,
                                            alongside: { [configuration] in try PGConnection(configuration, \.readDatabaseURL) }) { candidate, evaluation in
                    let slot = candidate.slot.flatMap { zones[$0] }
                    try report.row(ReportRow(candidate: candidate, evaluation: evaluation, runDate: date,
                                             timeZone: slot?.schedule.timeZone.identifier ?? configuration.timeZone.identifier,
                                             unknownTimeZone: slot?.unknownZone == true ? slot?.zoneName : nil))
                    if hooksAlerts && evaluation.decision == .send {
                        hooked.append(.webhookAlert(userID: candidate.userID, rawName: candidate.rawName,
                                                    missedDays: evaluation.missedDays, lastCheckIn: candidate.lastCheckIn))
                    }
                }
                tally.add(plan.tally)
                owed += plan.owed
            }
            try report.lifecycle(owed + hooked)
            try report.end(tally)
            return tally
        }
    }
}
