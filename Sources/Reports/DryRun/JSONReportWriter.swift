import Foundation
import Output
import Rule
import Store

/// The dry-run report as one JSON object (docs/interfaces.md), streamed: `run_date`, `time_zone`,
/// `threshold_days`, `catch_up_days`, `dry_run`, `users` (one object per listed user, with
/// `superseded_by`, `paused_until` and `ignored_future_check_in` where they apply) and `summary`
/// (the first five decisions always, `superseded` and `paused` when counted), and
/// `future_check_ins_ignored` (users with a check-in dated after `D + 1`).
public final class JSONReportWriter: ReportSink {
    private let output: TextOutput
    private let fullEmails: Bool
    private var first = true

    /// Writes to `output`, masking emails unless `fullEmails`.
    public init(output: TextOutput, fullEmails: Bool) {
        self.output = output
        self.fullEmails = fullEmails
    }

    public func begin(_ header: ReportHeader) throws {
        output.write("{\"run_date\":\(Escaping.json(header.runDate.description)),\"time_zone\":\(Escaping.json(header.timeZone)),"
                     + "\"threshold_days\":\(header.thresholdDays),\"catch_up_days\":\(header.catchUpDays),"
                     + "\"dry_run\":\(header.dryRun),\"users\":[")
    }

    public func row(_ row: ReportRow) throws {
        output.write(first ? "\n" : ",\n")
        first = false
        var object = "{\"user_id\":\(Escaping.json(row.userID)),\"name\":\(Escaping.json(row.name)),"
            + "\"email\":\(Escaping.json(row.displayEmail(full: fullEmails))),"
            + "\"last_check_in_date\":\(Escaping.json(row.lastCheckIn.description)),"
            + "\"consecutive_miss_days\":\(row.missedDays),\"decision\":\(Escaping.json(row.decision.rawValue))"
        if let reason = row.reason { object += ",\"reason\":\(Escaping.json(reason))" }
        if let newer = row.newerAccount { object += ",\"superseded_by\":\(Escaping.json(newer))" }
        if let paused = row.pausedUntil { object += ",\"paused_until\":\(Escaping.json(paused.description))" }
        if let future = row.ignoredFutureCheckIn { object += ",\"ignored_future_check_in\":\(Escaping.json(future.description))" }
        output.write(object + "}")
    }

    public func end(_ counts: RunCounts) throws {
        // Every decision has its count, 0 included: a program reading the summary never meets a missing key.
        let summary = Decision.allCases.map { "\(Escaping.json($0.rawValue)):\(counts.decisionCount($0))" }.joined(separator: ",")
        output.write("\n],\"summary\":{\(summary)},\"future_check_ins_ignored\":\(counts.futureIgnored)}\n")
        output.flush()
    }
}
