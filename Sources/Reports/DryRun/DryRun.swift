import Config
import Delivery
import Foundation
import Mail
import Rule
import Store
import Values

/// The dry run (`--run-now --dry-run`): reads the plan a real run would carry out — the same
/// `RunPlan`, with the users past the catch-up window listed too — in a read-only transaction,
/// and hands each listed user and each other message owed to a report. Sends nothing and writes
/// nothing (the plan reads the queued check-ins beside the summary rather than folding them), so
/// it is exact on a standby and as a role that may only read.
package struct DryRun: Sendable {
    /// The configuration in force.
    package let configuration: NotifierConfiguration
    /// `--date D` (everyone on `D`), or the instant (`--at`, or now) at which each user is on
    /// their own run date (docs/user-time.md).
    package let when: RunWhen
    /// Only the users whose days are counted in this zone (`--zone`), or everyone.
    package let zone: TimeZone?

    /// Creates the dry run of `when`, of the users counted in `zone` only when given.
    package init(configuration: NotifierConfiguration, when: RunWhen, zone: TimeZone? = nil) {
        self.configuration = configuration
        self.when = when
        self.zone = zone
    }

    /// Creates the dry run for `runDate`, every user on it.
    package init(configuration: NotifierConfiguration, runDate: CalendarDate) {
        self.init(configuration: configuration, when: .date(runDate))
    }

    /// The report's run date: the date given, or the service's own (`NOTIFY_TIME` in
    /// `NOTIFY_TIME_ZONE`) at the instant. Each row says its user's own.
    package var runDate: CalendarDate {
        switch when {
        case .date(let date): date
        case .instant(let instant): configuration.schedule.latestFire(atOrBefore: instant).date
        }
    }

    /// The dry run in words: `2026-01-13`, or the instant with the service's run date.
    package var described: String {
        switch when {
        case .date(let date): "\(date)"
        case .instant(let instant): "\(ISO8601DateFormatter().string(from: instant)) (\(runDate) in \(configuration.timeZone.identifier))"
        }
    }

    /// How many shares of the users the plan of the widest run date (a lone one: everyone's) is
    /// read in, side by side (the server has two cores here; splitting an instant's other run
    /// dates too measured slower when they were read beside it: bench/history/user-time.md).
    static let shares = 2

    /// How many rows each share's reader may have read ahead of the report (half a batch of the
    /// cursor's): with the batch the report is taking, what the dry run holds of the users (a few
    /// MB at most), whatever their number.
    static let readAhead = 1000

    /// Writes every listed user and every other message owed to `report`; returns the plan's tally
    /// (of all the instant's run dates). The run dates' plans are read one after the other, the
    /// widest (a lone run date) in `shares` disjoint shares of the users side by side, each on
    /// connections of its own (each statement reads its own snapshot either way), and the rows
    /// merged back into the batch query's order as they stream (each share streams in that
    /// order): the per-user probes of a million users are shared between the server's cores, and
    /// the report holds a few thousand rows at a time, not the users.
    package func write(into report: any ReportSink) throws -> RunTally {
        let db = try PGConnection(configuration.database, \.readURL)
        try RowSecurity.verify(db)
        try CheckInTriggers.verify(db)
        return try db.transaction(readOnly: true) {
            try report.begin(ReportHeader(runDate: runDate, timeZone: configuration.timeZone.identifier,
                                          thresholdDays: configuration.rule.thresholdDays,
                                          catchUpDays: configuration.rule.catchUpDays, dryRun: true,
                                          emptyTimeZoneUsers: try SlotSQL.emptyZoneUsers(db)))
            let (slots, dates) = try SlotRuns.runDates(when, db, configuration: configuration, zone: zone)
            // Each row names the zone its user's days are counted in, for a --date run too.
            let known = try slots ?? SlotSQL.slots(db, service: configuration.schedule)
            let zones = Dictionary(known.slots.map { ($0.key, $0) }) { first, _ in first }
            // The run date with the most slots (all of them for a lone one) in
            // shares; the others whole.
            let widest = dates.indices.max { (dates[$0].scope.slots?.count ?? .max) < (dates[$1].scope.slots?.count ?? .max) }
            // The owed messages, written to disk by each run date's first share as it reads them
            // (one share at a time: a run date's reads end before the next one's start).
            let spilled = try DueSpill()
            // A run date's reads start when the report comes to it: a reader waits while the
            // report has not taken its rows, and one read ahead would hold its session meanwhile
            // (under a pooler's small session pool, one the current readers may be waiting for).
            func read(_ position: Int) -> [Share] {
                let (date, scope) = dates[position]
                let shares = position == widest ? Self.shares : 1
                return (0..<shares).map { index in
                    let share = { var share = scope; share.part = shares > 1 ? (index, shares) : nil; return share }()
                    let rows = Handoff<Row>(capacity: Self.readAhead)
                    let plan = Background("sileme-plan-\(date)-\(index)") { [self] in
                        do {
                            let other = try PGConnection(configuration.database, \.readURL)
                            let plan = try other.transaction(readOnly: true, oneSnapshot: true) {
                                try self.plan(other, date: date, scope: share, zones: zones, into: rows, owedInto: spilled)
                            }
                            rows.finish()
                            return plan
                        } catch {
                            rows.finish(throwing: error)
                            throw error
                        }
                    }
                    return Share(rows: rows, plan: plan)
                }
            }
            var started: [Share] = []
            // Their connections are done with before this returns; a reader still waiting for the
            // report to take its rows (the report failed) stops.
            defer {
                for each in started {
                    each.rows.cancel()
                    _ = try? each.plan.wait()
                }
            }
            var tally = RunTally()
            var owed: [LifecycleStore.Due] = []
            // One event per user to send to when the webhook hears of alerts: kept on disk.
            let hooked = configuration.webhookSends(.alert) ? try DueSpill() : nil
            for position in dates.indices {
                let shares = read(position)
                started += shares
                // The batch query's order: greatest(L, paused_until) latest first, then the user id.
                var heads = try shares.map { try $0.rows.next() }
                while true {
                    var first: Int?
                    for index in heads.indices {
                        guard let row = heads[index] else { continue }
                        if let best = first, let leading = heads[best], !Row.precedes(row, leading) { continue }
                        first = index
                    }
                    guard let first, let row = heads[first] else { break }
                    try report.row(row.row)
                    if let hook = row.hook { try hooked?.append(hook) }
                    heads[first] = try shares[first].rows.next()
                }
                for share in shares {
                    let plan = try share.plan.wait()
                    tally.add(plan.tally)
                    owed += plan.owed
                }
            }
            try report.lifecycle(LifecycleMessages(owed: owed, spilled: spilled, hooks: hooked))
            try report.end(tally)
            return tally
        }
    }

    /// One share of one run date's plan being read: its rows as they come, and the plan.
    private struct Share {
        var rows: Handoff<Row>
        var plan: Background<RunPlan>
    }

    /// A listed user's row, where it goes (the batch query's order) and, with the webhook on and
    /// the user decided `send`, the alert's event.
    private struct Row: Sendable {
        var key: (since: CalendarDate, userID: String)
        var row: ReportRow
        var hook: LifecycleStore.Due?

        /// Whether `a` comes before `b` in the batch query's order: greatest(L, paused_until)
        /// latest first, then the user id.
        static func precedes(_ a: Row, _ b: Row) -> Bool {
            (a.key.since, b.key.userID) > (b.key.since, a.key.userID)
        }
    }

    /// Reads one share of one run date's plan on `db` (the first share's owed messages on a
    /// second read-only connection meanwhile, written to `spilled` a page at a time), handing each
    /// listed user's row to `rows` as the batch query streams it; the plan keeps only its counts.
    private func plan(_ db: PGConnection, date: CalendarDate, scope: RunPlan.Scope, zones: [String: NotifySlots.Slot],
                      into rows: Handoff<Row>, owedInto spilled: DueSpill) throws -> RunPlan {
        let hooksAlerts = configuration.webhookSends(.alert)
        // Each contact's language, as a run would choose it; templates that do not load (a run
        // would refuse them) leave the report without languages rather than without a report.
        let templates = try? MailTemplates(directory: configuration.templateDirectory, defaultLanguage: configuration.defaultLanguage)
        // The rows end with the batch query, before the first share waits for the owed messages:
        // the report takes the other share's rows meanwhile, and that reader's session is freed.
        return try RunPlan.read(db, configuration: configuration, runDate: date, scope: scope, includeStale: true, keepsJobs: false,
                                owedPages: { page in for due in page { try spilled.append(due) } },
                                alongside: { [configuration] in try PGConnection(configuration.database, \.readURL) },
                                afterEach: { rows.finish() }) { candidate, evaluation in
            let slot = candidate.slot.flatMap { zones[$0] }
            let since = max(candidate.lastCheckIn, candidate.pausedUntil ?? candidate.lastCheckIn)
            try rows.put(Row(key: (since, candidate.userID),
                             row: ReportRow(candidate: candidate, evaluation: evaluation, runDate: date,
                                            timeZone: slot?.schedule.timeZone.identifier ?? configuration.timeZone.identifier,
                                            slot: slot, language: templates.map { templates in { templates.choose(contact: $0, user: $1) } }),
                             hook: hooksAlerts && evaluation.decision == .send
                                 ? .webhookAlert(userID: candidate.userID, rawName: candidate.rawName,
                                                 missedDays: evaluation.missedDays, lastCheckIn: candidate.lastCheckIn)
                                 : nil))
        }
    }
}
