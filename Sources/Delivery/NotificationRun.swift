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
    /// Only these kinds of message (`retry --kind`), or every kind when nil.
    public let onlyKinds: Set<DeliveryJob.Kind>?

    /// Creates a run for `runDate`.
    public init(configuration: NotifierConfiguration, runDate: CalendarDate, mode: RunMode, logger: Logger,
                host: String = ProcessInfo.processInfo.hostName, onlyUsers: Set<String>? = nil,
                onlyKinds: Set<DeliveryJob.Kind>? = nil) {
        self.onlyKinds = onlyKinds
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
            configuration.databaseURL, schema: configuration.databaseSchema, patience: configuration.databaseReconnectSeconds,
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

        let hooksAlerts = configuration.webhookSends(.alert)
        var counts = RunCounts()
        var jobs: [DeliveryJob] = []
        var skips: [SkippedUser] = []
        var delivery = DeliveryResult()
        do {
            try db.perform { db in
                // Evaluated afresh if the connection broke half-way (a fold, a read-only pass,
                // then two idempotent statements).
                (counts, jobs, skips) = (RunCounts(), [], [])
                // The check-ins the daemon has not folded yet (all of them when it is not running).
                try CheckInQueue.fold(db)
                var evaluated = 0
                if onlyUsers == nil {
                    counts.stale = try store.countStale(db, runDate: runDate, rule: configuration.rule)
                    counts.futureIgnored = try store.countFutureCheckIns(db, runDate: runDate, rule: configuration.rule)
                }
                try evaluate(db, includeStale: false) { candidate, evaluation in
                    counts.count(evaluation.decision)
                    evaluated += 1
                    if evaluated % 1000 == 0 { control.progress(RunProgress(evaluated: evaluated, handled: 0, due: 0)) }
                    let alerts = onlyKinds?.contains(.alert) == false ? [] : configuration.rule.jobs(for: candidate, evaluation)
                    if !alerts.isEmpty {
                        jobs += alerts
                        // The alert's webhook event: one per user, listing the contacts.
                        if hooksAlerts { jobs.append(alerts[0].onWebhook(contacts: evaluation.contacts)) }
                        // A contact that is not a valid address beside valid ones: its own skipped row.
                        for bad in evaluation.invalidContacts {
                            skips.append(SkippedUser(userID: candidate.userID, missedDays: evaluation.missedDays,
                                                     lastCheckIn: candidate.lastCheckIn, decision: .invalidEmail,
                                                     reason: "emergency contact #\(bad.position): \(bad.reason)",
                                                     contact: bad.raw.trimmingCharacters(in: .whitespaces).lowercased()))
                        }
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
                    try store.releaseForRetry(db, userIDs: Array(onlyUsers ?? []), runDate: runDate,
                                              kinds: onlyKinds.map { Array($0) })
                }
                // Introductions first (a new contact learns who named them before anything else),
                // then the alerts, the all-clears and the follow-ups.
                let around = try lifecycle.jobs(db, kinds: onlyKinds ?? Set(DeliveryJob.Kind.allCases), onlyUsers: onlyUsers)
                jobs = around.filter { $0.kind == .introduction } + jobs + around.filter { $0.kind != .introduction }
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
            try? db.perform { try store.markContactsOK($0, logIDs: delivery.acceptedLogIDs) }
            _ = try? db.perform {
                try LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
                    .settleAllClearQueue($0, channels: configuration.channels(for: .allClear))
            }
        } catch {
            delivery.errors.append(error)
        }

        counts.sent = delivery.sent
        counts.failed = delivery.failedTransiently + delivery.failedPermanently + delivery.serverUnavailable
        counts.failedPermanently = delivery.failedPermanently
        counts.webhookSent = delivery.webhookSent
        counts.webhookFailed = delivery.webhookFailed
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
        let others = DeliveryJob.Kind.allCases.filter { $0 != .alert }.compactMap { kind in
            delivery.sentByKind[kind].map { "\($0) \(kind.rawValue)" }
        }
        let lifecycleText = others.isEmpty ? "" : " (alerts \(delivery.sentByKind[.alert] ?? 0), " + others.joined(separator: ", ") + ")"
        let webhookText = configuration.webhook == nil ? "" : "; webhook events: \(delivery.webhookSent) delivered, \(delivery.webhookFailed) failed"
        let message: Logger.Message = "run finished for \(runDate): \(counts.sent) sent\(lifecycleText), \(counts.failed) failed, \(skipped) skipped, \(counts.alreadyNotified) already notified, \(counts.stale) stale\(guards)\(gone)\(webhookText)\(errorText)"
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
                   ].merging(Self.kindFields(delivery)) { $1 }) { $1 })
        return result
    }

    /// `sent_all_clear`, `failed_follow_up`, … of a run's tally (every kind, 0 included).
    private static func kindFields(_ delivery: DeliveryResult) -> Logger.Metadata {
        var fields: Logger.Metadata = [:]
        for kind in DeliveryJob.Kind.allCases {
            fields["sent_\(kind.rawValue)"] = "\(delivery.sentByKind[kind] ?? 0)"
            fields["failed_\(kind.rawValue)"] = "\(delivery.failedByKind[kind] ?? 0)"
        }
        fields["sent_webhook"] = "\(delivery.webhookSent)"
        fields["failed_webhook"] = "\(delivery.webhookFailed)"
        return fields
    }

    /// The lifecycle messages of this run.
    private var lifecycle: Lifecycle { Lifecycle(configuration: configuration, runDate: runDate, logger: logger) }

    /// The daemon's all-clear pass (docs/lifecycle.md): sends the all-clears due now — a check-in
    /// ended a streak whose alert was accepted — and the retries of earlier ones, without a row in
    /// `notifier_runs` (it runs every `ALL_CLEAR_POLL_SECONDS` and on each check-in it hears of).
    /// It does not fold the check-in queue: the daemon's watcher folds it every second.
    /// Returns what it did; logs only when there was something to send.
    public func executeAllClears(makeTransport: (@Sendable () throws -> any MailTransport)? = nil,
                                 control: RunControl = RunControl()) throws -> (sent: Int, failed: Int) {
        let db = try PGConnection(configuration, applicationName: "sileme-notifier (all-clear)")
        // A stop cancels the query at once (a pass at a million users reads the day's alerts).
        let jobs = try db.cancellable(on: control.stop) { try lifecycle.jobs(db, kinds: [.allClear], onlyUsers: onlyUsers) }
        var delivery = DeliveryResult()
        if !jobs.isEmpty {
            let composer = try MailComposer(sending: configuration)
            let store = NotificationStore(owner: "\(host):\(ProcessInfo.processInfo.processIdentifier):\(UUID().uuidString.prefix(8).lowercased())",
                                          claimLeaseSeconds: configuration.claimLeaseSeconds)
            let dispatcher = Dispatcher(
                configuration: configuration, composer: composer, store: store, runDate: runDate, runID: nil,
                logger: logger, makeTransport: makeTransport ?? { [configuration] in try configuration.makeMailTransport() },
                control: control)
            delivery = dispatcher.deliver(jobs)
            try store.markContactsOK(db, logIDs: delivery.acceptedLogIDs)
        }
        try LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
            .settleAllClearQueue(db, channels: configuration.channels(for: .allClear))
        if let error = delivery.errors.first { throw error }
        return (delivery.sent + delivery.webhookSent,
                delivery.failedTransiently + delivery.failedPermanently + delivery.serverUnavailable + delivery.webhookFailed)
    }

    /// The candidates of the batch query through the rule (see `NotificationStore.evaluate`).
    package func evaluate(_ db: PGConnection, includeStale: Bool = true, _ body: (Candidate, Evaluation) throws -> Void) throws {
        try NotificationStore(owner: host, claimLeaseSeconds: configuration.claimLeaseSeconds)
            .evaluate(db, runDate: runDate, rule: configuration.rule, includeStale: includeStale, onlyUsers: onlyUsers, body)
    }
}
