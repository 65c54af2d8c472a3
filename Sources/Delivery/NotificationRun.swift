import Config
import Foundation
import Logging
import Mail
import Rule
import Store
import Systemd
import Values

/// One run for one date, in three phases: **plan** (fold the queued check-ins, then read what to
/// do: `RunPlan`, which never writes), **deliver** (claim → send → record, `Dispatcher`, fed the
/// alerts by a second read of the plan as it sends), and
/// **report** (`notifier_runs`, the metrics file, the journal's summary, all from one `RunTally`).
/// The daily run, `retry` and the daemon's all-clear pass are the same shape over a different
/// `RunPlan.Scope`; the dry run prints the plan instead of carrying it out.
package struct NotificationRun: Sendable {
    /// The configuration in force.
    package let configuration: NotifierConfiguration
    /// `D`.
    package let runDate: CalendarDate
    /// How the run was started.
    package let mode: RunMode
    /// Where events go.
    package let logger: Logger
    /// The host name written to `notifier_runs` and `claimed_by`.
    package let host: String
    /// Which of the day's work: everything, or `retry`'s users and kinds.
    package let scope: RunPlan.Scope
    /// Where the run's database sessions come from and go back to (the daemon's, kept from run
    /// to run); nil: the run opens its own and closes them.
    package var sessions: SessionKeeper? = nil

    /// Creates a run for `runDate`: of everyone's day, or — `retry` — of `onlyUsers` (and `onlyKinds`).
    package init(configuration: NotifierConfiguration, runDate: CalendarDate, mode: RunMode, logger: Logger,
                host: String = ProcessInfo.processInfo.hostName, onlyUsers: Set<String>? = nil,
                onlyKinds: Set<DeliveryJob.Kind>? = nil) {
        self.configuration = configuration
        self.runDate = runDate
        self.mode = mode
        self.logger = logger
        self.host = host
        scope = onlyUsers.map { .retry(users: $0, kinds: onlyKinds) }
            ?? RunPlan.Scope(users: nil, kinds: onlyKinds ?? RunPlan.Scope.day.kinds, evaluatesRule: true)
    }

    /// Creates the run of `scope` on `runDate` (one run date of an instant: `RunPlan.Scope.runDate`;
    /// the all-clear pass), taking its sessions from `sessions` when given.
    package init(configuration: NotifierConfiguration, runDate: CalendarDate, mode: RunMode, logger: Logger,
                host: String = ProcessInfo.processInfo.hostName, scope: RunPlan.Scope, sessions: SessionKeeper? = nil) {
        self.configuration = configuration
        self.runDate = runDate
        self.mode = mode
        self.logger = logger
        self.host = host
        self.scope = scope
        self.sessions = sessions
    }

    /// The real run: plan → deliver → report. Delivers through `makeTransport` (by default the
    /// one `MAIL_TRANSPORT` names).
    package func execute(makeTransport: (@Sendable () throws -> any MailTransport)? = nil,
                        control: RunControl = RunControl()) throws -> RunResult {
        let composer = try MailComposer(sending: configuration.mail)
        let run = try Steps.begin(self, control: control)
        var plan = RunPlan()
        var delivery = DeliveryResult()
        do {
            // Read afresh if the connection broke half-way: the writes before and after the read
            // are idempotent. The first pass counts every decision, keeps the introductions and
            // up to `RunPlan.owedKept` of the lifecycle's other messages (counts more), hands the
            // skips and the new holds over in batches as it finds them (recorded at once, the
            // skips announced: `Steps.PassWriter`), and keeps no alert: the alerts, then the
            // lifecycle's messages it only counted, stream into the senders afterwards
            // (`Steps.deliver`), so that the run's memory does not grow with the users, the mails
            // or what the lifecycle owes.
            let writer = Steps.PassWriter(run, control: control)
            let read = Result {
                try run.db.perform { db in
                    try CheckInQueue.fold(db)
                    if let users = scope.users { try run.releaseForRetry(db, users: users) }
                    if scope.kinds.contains(.escalation), let steps = EscalationSteps(configuration, logger: logger) {
                        try steps.take(db, now: Date())
                    }
                    let plan = try RunPlan.read(db, configuration: configuration, runDate: runDate, scope: scope, logger: logger,
                                                keepsJobs: false, keepsSkips: true, streamsOwed: true, control: control,
                                                skipped: writer.write, held: writer.write)
                    return try run.record(db, plan)
                }
            }
            writer.close()
            plan = try read.get()
            if let release = writer.heldUntil { plan.heldUntil = min(plan.heldUntil ?? release, release) }
            // A first pass read again after a broken connection finds the holds the first attempt
            // recorded as held already: they are still this run's new holds, to announce.
            plan.newHeld = max(plan.newHeld, writer.holdsHandedOver)
            run.announce(plan)
            let dispatcher = dispatcher(composer: composer, store: run.store, runID: run.id, makeTransport: makeTransport, control: control)
            delivery = mode == .daemon && plan.ruleJobs > 0 ? run.deliverShared(plan, through: dispatcher)
                                                            : run.deliver(plan, through: dispatcher)
            run.settle()
        } catch {
            delivery.tally = plan.tally
            delivery.errors.append(error)
        }
        return run.report(delivery)
    }

    /// The daemon's all-clear pass (docs/lifecycle.md): sends the all-clears due now — a check-in
    /// ended a streak whose alert was accepted — and the `acknowledged` notices of streaks a contact
    /// acknowledged on the page (docs/acknowledgement.md), and the retries of both, without a row in
    /// `notifier_runs` (it runs every `ALL_CLEAR_POLL_SECONDS` and on each check-in it hears of).
    /// It does not fold the check-in queue: the daemon's watcher folds it every second.
    /// Returns what it did; logs only when there was something to send.
    package func executeAllClears(makeTransport: (@Sendable () throws -> any MailTransport)? = nil,
                                 control: RunControl = RunControl()) throws -> (sent: Int, failed: Int) {
        let pass = NotificationRun(configuration: configuration, runDate: runDate, mode: mode, logger: logger, host: host,
                                   scope: .allClears(users: scope.users), sessions: sessions)
        let db = try sessions?.take() ?? PGConnection(configuration.database, applicationName: "sileme-notifier (all-clear)")
        defer { sessions?.keep(db) }
        // A stop cancels the query at once (a pass at a million users reads the day's alerts).
        let plan = try db.cancellable(on: control.stop) {
            // The escalation's steps due now first: the messages they owe go out in this pass.
            if let steps = EscalationSteps(configuration, logger: logger) { try steps.take(db, now: Date()) }
            return try RunPlan.read(db, configuration: configuration, runDate: runDate, scope: pass.scope, logger: logger,
                                    streamsOwed: true)
        }
        // The run's settle step, on this session; a failed write fails the pass.
        let settle = Steps.Settle(run: pass, store: Steps.newStore(self))
        var delivery = DeliveryResult()
        if !plan.jobs.isEmpty || plan.owedLater > 0 {
            // The messages counted are read again a page at a time as the senders send, on this
            // session: a pass after a long stop may owe a great many all-clears.
            let (connection, configuration, runDate, scope) = (Transfer(value: db), configuration, runDate, pass.scope)
            let read: Result<RunPlan, any Error>
            (delivery, read) = dispatcher(composer: try MailComposer(sending: configuration.mail), store: settle.store, runID: nil,
                                          makeTransport: makeTransport, control: control)
                .deliver(first: plan.jobs, streaming: plan.owedLater, then: [], into: RunTally()) { put in
                    try connection.value.cancellable(on: control.stop) {
                        try RunPlan.stream(connection.value, configuration: configuration, runDate: runDate, scope: scope,
                                           alerts: false, owed: plan.owedLater > 0, emit: put)
                    }
                }
            // The recorder marked the accepted contacts `ok`; a statement that failed fails the pass.
            if let error = delivery.contactsNotMarked { throw error }
            if case .failure(let error) = read, !(error is Dispatcher.Feed.Closed) { delivery.errors.append(error) }
        }
        // Cancelled by a stop too: it waits for the queue's lock like the fold.
        try db.cancellable(on: control.stop) { try settle.allClearQueue(db) }
        if let error = delivery.errors.first { throw error }
        let tally = delivery.tally
        return (tally.sent + tally.eventsSent, tally.failed + tally.eventsFailed)
    }

    /// The dispatcher of this run's messages.
    func dispatcher(composer: MailComposer, store: NotificationStore, runID: Int64?,
                            makeTransport: (@Sendable () throws -> any MailTransport)?, control: RunControl) -> Dispatcher {
        Dispatcher(configuration: configuration, composer: composer, store: store, runDate: runDate, runID: runID,
                   logger: logger, makeTransport: makeTransport ?? { [configuration, logger] in
                       try configuration.mail.makeMailTransport(onFailover: { Self.logFailover($0, logger: logger) })
                   },
                   control: control, sessions: sessions)
    }

    /// Journals a message passing a relay over (`relay_failover`, priority warning).
    static func logFailover(_ failover: RelayChain.Failover, logger: Logger) {
        let next = failover.to.map { "trying \($0)" } ?? "no relay left: it waits for a later pass"
        logger.warning("relay \(failover.from) could not take a message (\(failover.reason)); \(next)",
                       metadata: NotifierEvent.relayFailover.metadata.merging([
                        "relay": "\(failover.from)", "next_relay": "\(failover.to ?? "")", "reason": "\(failover.reason)"]) { $1 })
    }
}
