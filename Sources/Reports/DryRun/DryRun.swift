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
    /// (of all the instant's run dates). An instant's later run dates are planned meanwhile, each
    /// on connections of its own (each statement reads its own snapshot either way), and their
    /// rows kept until the first's are written: the run dates' plans cost what the longest costs.
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
            let later = dates.dropFirst().map { date, scope in
                Background("sileme-plan-\(date)") { [self] in
                    let other = try PGConnection(configuration, \.readDatabaseURL)
                    let kept = Locked<[ReportRow]>([])
                    let plan = try other.transaction(readOnly: true) {
                        try self.plan(other, date: date, scope: scope, zones: zones) { row in kept.withLock { $0.append(row) } }
                    }
                    return (plan: plan, rows: kept.withLock { $0 })
                }
            }
            defer { for each in later { _ = try? each.wait() } }  // their connections are done with before this returns
            var tally = RunTally()
            var owed: [LifecycleStore.Due] = []
            var hooked: [LifecycleStore.Due] = []
            for (index, (date, scope)) in dates.enumerated() {
                let plan: Planned
                if index == 0 {
                    plan = try self.plan(db, date: date, scope: scope, zones: zones) { try report.row($0) }
                } else {
                    let done = try later[index - 1].wait()
                    for row in done.rows { try report.row(row) }
                    plan = done.plan
                }
                tally.add(plan.plan.tally)
                owed += plan.plan.owed
                hooked += plan.hooked
            }
            try report.lifecycle(owed + hooked)
            try report.end(tally)
            return tally
        }
    }

    /// One run date's plan and, with the webhook on, each new alert's event (one per user).
    private struct Planned: Sendable {
        var plan: RunPlan
        var hooked: [LifecycleStore.Due] = []
    }

    /// Reads the plan of one run date on `db` (its owed messages on a second read-only connection
    /// meanwhile) and hands each listed user's row to `row`.
    private func plan(_ db: PGConnection, date: CalendarDate, scope: RunPlan.Scope, zones: [String: NotifySlots.Slot],
                      row: (ReportRow) throws -> Void) throws -> Planned {
        var hooked: [LifecycleStore.Due] = []
        let hooksAlerts = configuration.webhookSends(.alert)
        let plan = try RunPlan.read(db, configuration: configuration, runDate: date, scope: scope, includeStale: true,
                                    alongside: { [configuration] in try PGConnection(configuration, \.readDatabaseURL) }) { candidate, evaluation in
            let slot = candidate.slot.flatMap { zones[$0] }
            try row(ReportRow(candidate: candidate, evaluation: evaluation, runDate: date,
                              timeZone: slot?.schedule.timeZone.identifier ?? configuration.timeZone.identifier,
                              unknownTimeZone: slot?.unknownZone == true ? slot?.zoneName : nil))
            if hooksAlerts && evaluation.decision == .send {
                hooked.append(.webhookAlert(userID: candidate.userID, rawName: candidate.rawName,
                                            missedDays: evaluation.missedDays, lastCheckIn: candidate.lastCheckIn))
            }
        }
        return Planned(plan: plan, hooked: hooked)
    }
}
