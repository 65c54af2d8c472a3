import Config
import Foundation
import Logging
import Mail
import Rule
import Store
import Systemd
import Values

/// One run of the rule for one date: the batch query, the rule, and — unless it is a dry run —
/// the recorded skips and the dispatch of the due mails. The daemon, `--run-now` and the dry-run
/// report all go through `evaluate`, so the report shows exactly what a real run would decide.
public struct NotificationRun: Sendable {
    /// The configuration in force.
    public let configuration: NotifierConfiguration
    /// `D`.
    public let runDate: CalendarDate
    /// How the run was started.
    public let mode: RunMode
    /// Where events go.
    public let logger: Logger
    /// The host name written to `notifier_runs` and `claimed_by`.
    public let host: String
    /// Only these users (the `retry` command), or everyone when nil.
    public let onlyUsers: Set<String>?

    /// Creates a run for `runDate`.
    public init(configuration: NotifierConfiguration, runDate: CalendarDate, mode: RunMode, logger: Logger,
                host: String = ProcessInfo.processInfo.hostName, onlyUsers: Set<String>? = nil) {
        self.configuration = configuration
        self.runDate = runDate
        self.mode = mode
        self.logger = logger
        self.host = host
        self.onlyUsers = onlyUsers
    }

    /// The real run: records it in `notifier_runs`, evaluates, records skipped users, delivers the
    /// due mails through `makeTransport` (by default the one `MAIL_TRANSPORT` names), and reports every event.
    public func execute(makeTransport: (@Sendable () throws -> any MailTransport)? = nil,
                        control: RunControl = RunControl()) throws -> RunResult {
        let composer = try MailComposer(sending: configuration)
        // After `startRun` (not retried: it inserts), every statement on this connection may run
        // twice, so a broken connection is reconnected (DATABASE_RECONNECT_SECONDS).
        let db = try ReconnectingConnection(
            configuration.databaseURL, patience: configuration.databaseReconnectSeconds,
            onRetry: Dispatcher.reconnectNotice(logger), onWait: { control.alive() }, stop: control.stop)
        // `claimed_by`: this run's own (the claim takes its own rows over after a broken connection).
        let store = NotificationStore(owner: "\(host):\(ProcessInfo.processInfo.processIdentifier):\(UUID().uuidString.prefix(8).lowercased())",
                                      claimLeaseSeconds: configuration.claimLeaseSeconds)
        // Rows hidden by row-level security would look like nobody being due: refuse (exit 78).
        try db.perform { try RowSecurity.verify($0) }
        let runID = try db.perform(retrying: false) { try store.startRun($0, runDate: runDate, mode: mode, host: host) }
        let base: Logger.Metadata = ["run_date": "\(runDate)", "run_mode": "\(mode.rawValue)", "run_id": "\(runID)"]
        logger.info("run started for \(runDate) (\(mode.rawValue))", metadata: base.merging(NotifierEvent.runStarted.metadata) { $1 }.merging([
            "threshold_days": "\(configuration.rule.thresholdDays)", "time_zone": "\(configuration.timeZone.identifier)",
            "notifier_version": "\(NotifierVersion.current)",
        ]) { $1 })

        var counts = RunCounts()
        var jobs: [DeliveryJob] = []
        var skips: [SkippedUser] = []
        var delivery = DeliveryResult()
        do {
            try db.perform { db in
                // Evaluated afresh if the connection broke half-way (a read-only pass, then two
                // idempotent statements).
                (counts, jobs, skips) = (RunCounts(), [], [])
                var evaluated = 0
                if onlyUsers == nil {
                    counts.stale = try store.countStale(db, runDate: runDate, rule: configuration.rule)
                    counts.futureIgnored = try store.countFutureCheckIns(db, runDate: runDate, rule: configuration.rule)
                }
                try evaluate(db, includeStale: false) { candidate, evaluation in
                    counts.count(evaluation.decision)
                    evaluated += 1
                    if evaluated % 1000 == 0 { control.progress(RunProgress(evaluated: evaluated, handled: 0, due: 0)) }
                    if let job = configuration.rule.job(for: candidate, evaluation) {
                        jobs.append(job)
                    } else if evaluation.decision.recordsSkip {
                        skips.append(SkippedUser(userID: candidate.userID, missedDays: evaluation.missedDays,
                                                 lastCheckIn: candidate.lastCheckIn, decision: evaluation.decision,
                                                 reason: evaluation.reason ?? evaluation.decision.rawValue,
                                                 newerAccount: evaluation.supersededBy?.userID))
                    }
                }
                try store.recordSkips(db, skips, runDate: runDate, runID: runID)
                if onlyUsers != nil {
                    // `retry`: failed mails of users still due are due again now (the claim takes them).
                    try store.releaseForRetry(db, userIDs: jobs.map(\.userID), runDate: runDate)
                }
            }
            if counts.futureIgnored > 0 {
                logger.warning("\(counts.futureIgnored) user(s) have check-ins dated after \(runDate.adding(days: 1)); the rule ignores them (a wrong device clock)",
                               metadata: base.merging(NotifierEvent.futureCheckInsIgnored.metadata) { $1 }.merging([
                    "future_ignored": "\(counts.futureIgnored)"]) { $1 })
            }
            for skip in skips {
                var fields: Logger.Metadata = [
                    "user_id": "\(skip.userID)", "miss_days": "\(skip.missedDays)",
                    "skip_reason": "\(skip.decision.rawValue)", "detail": "\(skip.reason)",
                ]
                if let newer = skip.newerAccount { fields["newer_user_id"] = "\(newer)" }
                logger.warning("notification skipped for user \(skip.userID): \(skip.reason)",
                               metadata: base.merging(NotifierEvent.notificationSkipped.metadata) { $1 }.merging(fields) { $1 })
            }
            let dispatcher = Dispatcher(
                configuration: configuration, composer: composer, store: store, runDate: runDate, runID: runID,
                logger: logger, makeTransport: makeTransport ?? { [configuration] in try configuration.makeMailTransport() },
                control: control)
            delivery = dispatcher.deliver(jobs)
        } catch {
            delivery.errors.append(error)
        }

        counts.sent = delivery.sent
        counts.failed = delivery.failedTransiently + delivery.failedPermanently + delivery.serverUnavailable
        counts.failedPermanently = delivery.failedPermanently
        counts.busyElsewhere = delivery.busyElsewhere
        counts.gone = delivery.gone
        counts.claimErrors = delivery.claimErrors
        counts.cancelled = delivery.cancelled
        if delivery.notStarted > 0 {
            delivery.errors.append(RunInterrupted(remaining: delivery.notStarted))
        }
        let result = RunResult(runID: runID, counts: counts, errors: delivery.errors.map { "\($0)" },
                               databaseLost: delivery.errors.contains { ($0 as? DatabaseError)?.kind == .unreachable },
                               mailServerUnavailable: delivery.serverUnavailable > 0 && delivery.sent == 0)
        // The run's own row is written on the run's first connection; if that is gone too, the
        // journal below is the record (and the row stays `running`).
        try? db.perform { try store.finishRun($0, id: runID, counts: counts, error: result.errors.first) }
        try? db.perform { MetricsFile.update(configuration, $0, logger: logger) }
        let level: Logger.Level = result.errors.isEmpty && counts.failed == 0 ? .notice : .error
        let skipped = counts.invalidEmail + counts.invalidName + counts.claimErrors
        let gone = counts.gone > 0 ? ", \(counts.gone) deleted during the run" : ""
        let errorText = result.errors.first.map { "; error: \($0)" } ?? ""
        let guards = counts.guardsText.map { ", " + $0 } ?? ""
        let message: Logger.Message = "run finished for \(runDate): \(counts.sent) sent, \(counts.failed) failed, \(skipped) skipped, \(counts.alreadyNotified) already notified, \(counts.stale) stale\(guards)\(gone)\(errorText)"
        logger.log(level: level, message,
                   metadata: base.merging(NotifierEvent.runFinished.metadata) { $1 }.merging([
                    "due": "\(counts.due)", "sent": "\(counts.sent)", "failed": "\(counts.failed)",
                    "failed_permanently": "\(counts.failedPermanently)",
                    "already_notified": "\(counts.alreadyNotified)", "stale": "\(counts.stale)",
                    "invalid_email": "\(counts.invalidEmail)", "invalid_name": "\(counts.invalidName)",
                    "busy_elsewhere": "\(counts.busyElsewhere)", "superseded": "\(counts.superseded)",
                    "paused": "\(counts.paused)", "cancelled": "\(counts.cancelled)",
                    "future_ignored": "\(counts.futureIgnored)", "gone": "\(counts.gone)", "claim_errors": "\(counts.claimErrors)",
                    "exit_status": "\(result.exitStatus.rawValue)",
                   ]) { $1 })
        return result
    }

    /// The candidates of the batch query through the rule (see `NotificationStore.evaluate`).
    package func evaluate(_ db: PGConnection, includeStale: Bool = true, _ body: (Candidate, Evaluation) throws -> Void) throws {
        try NotificationStore(owner: host, claimLeaseSeconds: configuration.claimLeaseSeconds)
            .evaluate(db, runDate: runDate, rule: configuration.rule, includeStale: includeStale, onlyUsers: onlyUsers, body)
    }
}
