import AckPage
import Config
import Delivery
import Foundation
import Logging
import Mail
import Rule
import ServiceLifecycle
import Store
import Systemd
import Texts
import Values

/// The long-running worker: serves every user at their own notify instant (their `time_zone` and
/// `notify_time`, or `NOTIFY_TIME` in `NOTIFY_TIME_ZONE`: docs/user-time.md), looking at the
/// slots again every minute; catches up the instants it missed while it was down (like a
/// timer's `Persistent=true`); retries transient failures until the next instant; survives the
/// database being down; and speaks the systemd notify protocol (`READY`, `STATUS`, `WATCHDOG`,
/// `RELOADING`, `STOPPING`).
///
/// Blocking: `run()` occupies the calling thread until `requestStop()` (or SIGTERM) has stopped
/// every part. `requestStop()` and `requestReload()` may be called from any thread (the signal
/// handlers).
package final class Daemon: @unchecked Sendable {
    /// Re-reads the configuration (file, environment, credentials) for SIGHUP.
    package typealias ConfigurationSource = @Sendable () throws(ConfigurationError) -> NotifierConfiguration

    private var configuration: NotifierConfiguration {
        didSet { shared.withLock { $0 = configuration } }
    }
    /// The configuration as the all-clear thread reads it.
    private let shared: Locked<NotifierConfiguration>
    /// The database sessions of the scheduler, the runs and the all-clear pass, kept from one use
    /// to the next (a new one per reload of the configuration).
    private let keeper: Locked<SessionKeeper>
    private var sessions: SessionKeeper { keeper.withLock { $0 } }
    private let reloadConfiguration: ConfigurationSource
    private let logger: Logger
    private let systemd: SystemdNotifier
    private let clock: any Clock
    private let timer: WallClockTimer
    private let host: String
    private let stop: StopSignal
    private let reloadRequested = Locked(false)
    private let lastWatchdogPing = Locked(Date.distantPast)
    private var lastRun = "none yet"
    private var failedRuns = 0
    private var notBefore: Date = .distantPast
    /// The latest run date retention was applied for (by this process).
    private var retainedThrough = CalendarDate(dayNumber: 0)
    /// The slots as the last look read them: kept while nobody's slot changes, so that a
    /// look a minute is one probe, and thousands of slots are resolved only when one changed.
    private var knownSlots: SlotSQL.Known?
    /// The runs whose sending this daemon joined (each once: then their holder finishes alone).
    private var joinedRuns: Set<Int64> = []
    /// The page's texts (`page.texts` of the language folders), as the start's check and each
    /// reload loaded them; their default language is the mail templates'.
    private let pageTexts: Locked<TextTable>

    /// Creates a daemon with a configuration already loaded and validated. `stop` is the process's
    /// stop signal (raised by `requestStop()` or by the caller's signal handler).
    package init(configuration: NotifierConfiguration, reloadConfiguration: @escaping ConfigurationSource,
                logger: Logger, systemd: SystemdNotifier = SystemdNotifier(), clock: any Clock = SystemClock(),
                host: String = ProcessInfo.processInfo.hostName, stop: StopSignal = StopSignal()) throws {
        self.stop = stop
        self.configuration = configuration
        shared = Locked(configuration)
        keeper = Locked(SessionKeeper(configuration.database, senders: configuration.smtp.connections))
        self.reloadConfiguration = reloadConfiguration
        self.logger = logger
        self.systemd = systemd
        self.clock = clock
        self.host = host
        timer = try WallClockTimer(stop: stop)
        pageTexts = Locked(try TextTable(file: TextTable.page, directory: nil, defaultLanguage: .serviceDefault))
    }

    /// Asks the daemon to stop (raises its stop signal): a run in progress finishes the messages
    /// in flight and records them, every wait returns; then `run()` returns.
    package func requestStop() { stop.stop() }

    /// Asks the daemon to re-read its configuration and templates (between runs).
    package func requestReload() {
        reloadRequested.withLock { $0 = true }
        timer.cancel()
    }

    private var stopRequested: Bool { stop.isStopped }

    /// Runs until stopped. Returns 0 after a clean stop, 78 for a configuration or schema problem
    /// found at start, 69 when the database cannot be reached at start.
    ///
    /// The daemon's long-lived parts are the `Service`s of one group (`DaemonGroup`), which starts
    /// them together and stops them one by one, the last of the list first; the calling thread
    /// waits for it. A new part is one `Service` (a blocking loop: a `ThreadService`) added to
    /// the list.
    package func run() -> ExitStatus {
        if let failure = startupCheck() { return failure }
        let startup = Startup()
        let exit = Locked(ExitStatus.success)
        // The acknowledgement page (ACK_LISTEN): listening before READY, its texts as the start's
        // check (and then each reload) loaded them, its last language the default the mails settled on.
        let page = AckPageServer(configuration: configuration, texts: { [pageTexts] in pageTexts.withLock { $0 } }, logger: logger)
        // All-clears within seconds of the check-in, beside the daily schedule.
        let watcher = AllClearWatcher(configuration: { [shared] in shared.withLock { $0 } },
                                      sessions: { [keeper] in keeper.withLock { $0 } }, logger: logger, host: host, stop: stop)
        var parts: [any Service] = [
            ThreadService("sileme-scheduler", stop: stop) { [self] in
                let status = schedule(page: page, startup: startup)
                exit.withLock { $0 = status }
            },
            ThreadService("sileme-all-clear", stop: stop, after: startup, loop: watcher.loop),
        ]
        // The bounce mailbox (BOUNCE_MAILBOX), read every BOUNCE_POLL_SECONDS on its own thread
        // and connection: a mailbox that cannot be read is logged and never holds up an alert.
        if let bounce = configuration.bounce {
            let reader = BounceReader(settings: bounce, database: configuration.database, logger: logger,
                                      webhook: configuration.webhook, appName: configuration.appName)
            parts.append(ThreadService("sileme-bounces", stop: stop, after: startup) { [stop] in reader.loop(stop: stop) })
        }
        // The canary (CANARY_EVERY): a test message through each relay into that mailbox, on its
        // own thread and connection; one not back within CANARY_WITHIN is canary_lost.
        if let canary = CanarySender(configuration: configuration, logger: logger) {
            parts.append(ThreadService("sileme-canary", stop: stop, after: startup) { [stop] in canary.loop(stop: stop) })
        }
        // Last: the first the group stops, so its clients' connections close while the loops finish.
        if let page { parts.append(page) }
        DaemonGroup.run(parts, stop: stop, logger: logger)
        return exit.withLock { $0 }
    }

    /// The scheduler (the daemon's own loop, on its thread): says `READY` once the page listens,
    /// then serves each instant until the stop signal; `STOPPING=1` at the end.
    private func schedule(page: AckPageServer?, startup: Startup) -> ExitStatus {
        do { try page?.waitUntilListening() } catch {
            logger.critical("\(error)")
            startup.finish(started: false)
            stop.stop()  // the group ends: nothing else was started
            return .configuration
        }
        if configuration.metricsFile != nil, let db = try? PGConnection(configuration.database) {
            MetricsFile.update(configuration, db, logger: logger)
        }
        startup.finish(started: true)
        systemd.ready(status: "started; " + waitingStatus(next: (try? currentSlots()) ?? serviceSlots))
        let service = "\(configuration.notifyTime) \(configuration.timeZone.identifier)"
        logger.notice("daemon started: serves each user at their own time, by default \(service)",
                      metadata: NotifierEvent.daemonStarted.metadata)
        var databaseBackoff: TimeInterval = 0
        while !stopRequested {
            if reloadRequested.withLock({ $0 }) { reload() }
            pingWatchdogIfDue()
            do {
                let now = clock.now()
                let (slots, action) = try look(now: now)
                // A user who changes their zone or time is seen within a minute.
                let lookAgain = now.addingTimeInterval(Self.slotsInterval)
                switch action {
                case .run(let instant, let only, let reason):
                    performRun(at: instant, slots: only, known: slots, reason: reason)
                case .waitAfterFailure(let deadline):
                    systemd.status("last run failed; trying again at \(Self.format(notBefore, in: configuration.timeZone)); last run: \(lastRun)")
                    wait(until: min(deadline, lookAgain))
                case .waitForRetry(let deadline):
                    systemd.status("retry of failed mails at \(Self.format(deadline, in: configuration.timeZone)); " + waitingStatus(next: slots))
                    wait(until: min(deadline, lookAgain))
                case .waitForHoldEnd(let deadline):
                    systemd.status("alerts held over an intake gap go out at \(Self.format(deadline, in: configuration.timeZone)); "
                                   + waitingStatus(next: slots))
                    wait(until: min(deadline, lookAgain))
                case .waitForNextRun(let deadline):
                    systemd.status("waiting; " + waitingStatus(next: slots))
                    wait(until: min(deadline, lookAgain))
                }
                databaseBackoff = 0
            } catch {
                databaseBackoff = min(300, max(5, databaseBackoff * 2))
                logger.error("database unavailable: \(error); retrying in \(Int(databaseBackoff)) s",
                             metadata: NotifierEvent.databaseUnavailable.metadata)
                systemd.status("database unavailable; retrying in \(Int(databaseBackoff)) s; last run: \(lastRun)")
                wait(until: clock.now().addingTimeInterval(databaseBackoff))
            }
        }
        systemd.stopping(status: "stopping; last run: \(lastRun)")
        logger.notice("daemon stopped", metadata: NotifierEvent.daemonStopped.metadata)
        return .success
    }

    // MARK: Deciding

    /// How often the daemon looks at the slots again (one probe while nobody's changed).
    static let slotsInterval: TimeInterval = 60

    /// The service's own slot only (before the database has answered).
    private var serviceSlots: NotifySlots { NotifySlots(keys: [], service: configuration.schedule) }

    /// The slots, read now.
    private func currentSlots() throws -> NotifySlots {
        try sessions.with { try readSlots($0) }
    }

    /// The slots, read now: the known ones while nobody's slot changed (`SlotSQL.look`).
    private func readSlots(_ db: PGConnection) throws -> NotifySlots {
        let known = try SlotSQL.look(db, service: configuration.schedule, known: knownSlots, now: clock.now())
        knownSlots = known
        return known.slots
    }

    /// Reads the slots (one probe while nobody's changed) and the state of the dates
    /// their latest instants are on, and decides (`NextAction.decide`): a few index probes, once
    /// a minute. The sessions idle for long are closed meanwhile.
    private func look(now: Date) throws -> (NotifySlots, NextAction) {
        sessions.closeIdle()
        return try sessions.with { db in
            let slots = try readSlots(db)
            let state = try DaemonState.read(db, dates: NextAction.dates(now: now, slots: slots),
                                             claims: ClaimSQL(leaseSeconds: configuration.claimLeaseSeconds))
            return (slots, NextAction.decide(now: now, slots: slots, state: state, notBefore: notBefore))
        }
    }

    private func waitingStatus(next slots: NotifySlots) -> String {
        let next = slots.nextFire(after: clock.now())
        let users = next.slots.count == slots.slots.count ? "" : " (\(next.slots.count) of \(slots.slots.count) users' times)"
        return "next run \(Self.format(next.instant, in: configuration.timeZone))\(users), last run: \(lastRun)"
    }

    // MARK: Running

    /// The runs of `instant` for the users of `slots` (nil: everyone), one per run date, under the
    /// run lock. `known`: the slots as the decision read them a moment ago (not read again:
    /// 3,840 slots cost 23 ms at a million users, and a day has ~200 instants).
    private func performRun(at instant: Date, slots: Set<String>?, known: NotifySlots, reason: NextAction.Reason) {
        let lock: RunLock
        do {
            guard let acquired = try RunLock.take(for: configuration.database, leaseSeconds: configuration.claimLeaseSeconds, waiting: .no, keeper: sessions) else {
                joinOrWait(at: instant, slots: slots, known: known, reason: reason)
                return
            }
            lock = acquired
        } catch {
            logger.error("cannot take the run lock: \(error)")
            backOffAfterFailure()
            return
        }
        defer { lock.release() }
        let instantRuns: InstantRuns
        do {
            instantRuns = try InstantRuns.read(.instant(instant), configuration: configuration, mode: .daemon, among: slots, known: known,
                                               logger: logger, host: host, sessions: sessions)
        } catch {
            logger.error("cannot read the users' times: \(error)", metadata: NotifierEvent.runFailed.metadata)
            backOffAfterFailure()
            return
        }
        let outcome = instantRuns.execute(stop: stop, afterFailure: .stop, started: clock.now(),
                                          starting: { self.control(for: $0, reason: reason) }, finished: finished)
        guard outcome.completed else { return }
        failedRuns = 0
        notBefore = .distantPast
        if let error = outcome.holdsNotEnded {
            // The next run of everyone ends them.
            logger.error("held alerts: cannot record the end of holds: \(error)")
        }
        // Retention once per run date (an instant's runs come many times a day with many slots).
        if reason != .retry, let latest = instantRuns.runs.first?.runDate, latest > retainedThrough {
            applyRetention(runDate: latest)
            retainedThrough = latest
        }
    }

    /// How often a daemon that finds the run lock taken looks for the run's sending to join.
    static let joinLookInterval: TimeInterval = 2

    /// Another run holds the run lock: for up to 30 s, every `joinLookInterval`, looks whether it
    /// opened its sending to others (`SharedSending`: after its first pass, which decided the
    /// guards, skips and holds) and joins the first of this instant's runs it finds open — not a
    /// retry's, which the holder's own claims finish. Returns at once when the lock is free.
    private func joinOrWait(at instant: Date, slots: Set<String>?, known: NotifySlots, reason: NextAction.Reason) {
        systemd.status("another run is in progress on this database; last run: \(lastRun)")
        let deadline = clock.now().addingTimeInterval(30)
        guard reason != .retry else {
            logger.notice("another run holds the run lock; checking again in 30 s")
            return wait(until: deadline)
        }
        // The instant's runs are read once: what it serves does not change while the lock is held.
        let instantRuns: InstantRuns
        do {
            instantRuns = try InstantRuns.read(.instant(instant), configuration: configuration, mode: .join, among: slots,
                                               known: known, logger: logger, host: host, sessions: sessions)
        } catch {
            logger.error("cannot look for a run to join: \(error)")
            return wait(until: deadline)
        }
        let wanted = instantRuns.runs.map { (runDate: $0.runDate, slots: $0.scope.slots) }
        var toldWaiting = false
        while !stopRequested, !reloadRequested.withLock({ $0 }), clock.now() < deadline {
            do {
                let look = try sessions.with { try SharedSending.look($0, dates: wanted.map(\.runDate)) }
                guard look.lockHeld else { return }
                if let open = SharedSending.Run.choose(among: look.open, for: wanted, joined: joinedRuns),
                   let run = instantRuns.runs.first(where: { open.serves($0.runDate, slots: $0.scope.slots) }) {
                    join(open, with: run, reason: reason)
                    return
                }
            } catch {
                logger.error("cannot look for a run to join: \(error)")
                return wait(until: deadline)
            }
            if !toldWaiting {
                logger.notice("another run holds the run lock; joining its sending once it is open, else checking again in 30 s")
                toldWaiting = true
            }
            wait(until: min(deadline, clock.now().addingTimeInterval(Self.joinLookInterval)))
        }
    }

    /// Sends with `open`, another daemon's run of `run`'s run date and slots, what this daemon
    /// claims of its alerts; the run then goes on without it, and this daemon decides afresh.
    private func join(_ open: SharedSending.Run, with run: NotificationRun, reason: NextAction.Reason) {
        joinedRuns.insert(open.id)
        if joinedRuns.count > 64 { joinedRuns = [open.id] }
        logger.notice("joining the sending of run \(open.id) for \(open.runDate) (\(open.jobs) messages)")
        let result = Result { try run.join(open, control: control(for: run, reason: reason)) }
        if case .success(let done) = result {
            lastRun = "\(run.runDate): \(done.counts.sent) sent, \(done.counts.failed) failed (joined run \(open.id))"
        } else if case .failure(let error) = result {
            logger.error("joining run \(open.id) for \(open.runDate) failed: \(error)", metadata: NotifierEvent.runFailed.metadata)
        }
        // Until the holder has finished that run (its messages in flight, the lifecycle's): were
        // this daemon to decide meanwhile, it would find the run unfinished and, the lock let go a
        // moment later, make the whole run again for nothing. For at most `joinedRunWaitSeconds`:
        // a holder that hangs (its lock renewed while its process lives) must not hold this
        // daemon's schedule too; deciding afresh then costs a look, never a second send (claims).
        let finish = BoundedWait("run \(open.id) for \(open.runDate), whose sending this daemon joined, to finish (another daemon's)",
                                 bound: Self.joinedRunWaitSeconds)
        do {
            _ = try finish.poll(every: 1, stop: stop, say: { logger.notice("\($0)") }, alive: { self.pingWatchdogIfDue() }) { _ -> Bool? in
                if reloadRequested.withLock({ $0 }) { return true }
                guard let look = try? sessions.with({ try SharedSending.look($0, dates: [open.runDate]) }),
                      look.lockHeld, look.open.contains(where: { $0.id == open.id }) else { return true }
                return nil
            }
        } catch {
            logger.warning("\(error); this daemon decides afresh (a message the other run claimed is never sent twice)")
        }
    }

    /// The most a daemon that joined another's sending waits for that run to finish
    /// (`BoundedWait`): its messages in flight and the lifecycle's, usually seconds.
    static let joinedRunWaitSeconds: TimeInterval = 300

    /// A run's control as it starts: says the run in `STATUS=`, and feeds the watchdog (with the
    /// run's progress in `STATUS=`) from the run's own threads.
    private func control(for run: NotificationRun, reason: NextAction.Reason) -> RunControl {
        let date = run.runDate
        systemd.status("running for \(date) (\(reason))")
        return RunControl(stop: stop, onProgress: { [weak self] progress in
            guard let self else { return }
            if self.pingWatchdogIfDue() {
                self.systemd.status(progress.due > 0 ? "running for \(date): \(progress.handled)/\(progress.due) mails handled"
                                                     : "running for \(date): \(progress.evaluated) users evaluated")
            }
        }, onAlive: { [weak self] in self?.pingWatchdogIfDue() })
    }

    /// How a run ended: the last run for `STATUS=`, the heartbeat, and the back-off after a
    /// failure (errors not caused by a stop, or a throw).
    private func finished(_ run: NotificationRun, _ result: Result<RunResult, any Error>) {
        let date = run.runDate
        switch result {
        case .success(let result):
            lastRun = "\(date): \(result.counts.sent) sent, \(result.counts.failed) failed"
            Heartbeat(url: configuration.heartbeatURL, logger: logger, stop: stop).report(success: result.exitStatus == .success || result.exitStatus == .tempFailure)
            if !result.errors.isEmpty && !stopRequested { backOffAfterFailure() }
        case .failure(let error):
            lastRun = "\(date): failed (\(error))"
            logger.error("run for \(date) failed: \(error)", metadata: NotifierEvent.runFailed.metadata.merging(["run_date": "\(date)"]) { $1 })
            Heartbeat(url: configuration.heartbeatURL, logger: logger, stop: stop).report(success: false)
            backOffAfterFailure()
        }
    }

    /// `RETENTION_DAYS`: after a daily run, deletes `notification_logs`, `notifier_runs` and
    /// `escalations` rows dated more than that many days before the run date, in small batches (a stop ends it
    /// between two batches; the next day goes on). A failure — for a role without DELETE on those
    /// tables, say — is logged and changes nothing else.
    private func applyRetention(runDate: CalendarDate) {
        guard configuration.retentionDays > 0, !stopRequested else { return }
        let cutoff = runDate.adding(days: -configuration.retentionDays)
        systemd.status("deleting rows before \(cutoff) (RETENTION_DAYS=\(configuration.retentionDays))")
        let started = Date()
        do {
            let deleted = try sessions.with {
                try Housekeeping.deleteOlder($0, than: cutoff, stop: stop)
            }
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            logger.notice("""
                retention: deleted \(deleted.logs) notification rows and \(deleted.runs) runs dated before \(cutoff), \
                and \(deleted.escalations) escalation records of streaks alerted before it, in \(seconds) s
                """,
                          metadata: ["retention_cutoff": "\(cutoff)", "deleted_logs": "\(deleted.logs)", "deleted_runs": "\(deleted.runs)",
                                     "deleted_escalations": "\(deleted.escalations)"])
        } catch {
            logger.error("retention: rows before \(cutoff) not deleted: \(error)")
        }
    }

    /// After a failed run, wait 1, 2, 4 … 30 minutes before the next attempt (never a tight loop).
    private func backOffAfterFailure() {
        failedRuns += 1
        notBefore = clock.now().addingTimeInterval(min(1800, 60 * pow(2, Double(failedRuns - 1))))
    }

    // MARK: Waiting, watchdog, reload

    /// Sleeps until `deadline` on the wall clock, waking for watchdog pings, and returning early on
    /// a stop or reload request or a wall-clock change (then the caller recomputes the schedule).
    private func wait(until deadline: Date) {
        let slice = systemd.watchdogPingInterval ?? 60
        while !stopRequested, !reloadRequested.withLock({ $0 }) {
            switch timer.wait(until: deadline, orAtMost: slice) {
            case .intervalElapsed:
                pingWatchdogIfDue()
            case .clockChanged:
                logger.notice("the wall clock changed; recomputing the schedule")
                return
            case .deadlineReached, .cancelled:
                return
            }
        }
    }

    /// Sends `WATCHDOG=1` when half the watchdog interval has passed since the last ping.
    @discardableResult
    private func pingWatchdogIfDue() -> Bool {
        guard let interval = systemd.watchdogPingInterval else { return true }
        let now = Date()
        let due = lastWatchdogPing.withLock { last -> Bool in
            guard now.timeIntervalSince(last) >= interval * 0.9 else { return false }
            last = now
            return true
        }
        if due { systemd.watchdog() }
        return due
    }

    private func reload() {
        reloadRequested.withLock { $0 = false }
        systemd.reloading()
        do {
            let fresh = try reloadConfiguration()
            let texts = try Self.validate(fresh)
            configuration = fresh
            pageTexts.withLock { $0 = texts }
            keeper.withLock { $0 = SessionKeeper(fresh.database, senders: fresh.smtp.connections) }
            notBefore = .distantPast
            logger.notice("configuration reloaded", metadata: NotifierEvent.configurationReloaded.metadata)
        } catch {
            logger.error("configuration reload refused, the previous configuration stays in force: \(error)",
                         metadata: NotifierEvent.configurationRejected.metadata)
        }
        systemd.ready(status: "waiting; " + waitingStatus(next: (try? currentSlots()) ?? serviceSlots))
    }

    /// What must hold before the daemon says READY: the configuration can send, the templates
    /// render, the database answers and its schema is current. Nil when it holds; the exit status
    /// otherwise (`.success` when a stop came while waiting for the database).
    private func startupCheck() -> ExitStatus? {
        do {
            let texts = try Self.validate(configuration)
            pageTexts.withLock { $0 = texts }
        } catch {
            logger.critical("\(error)")
            return .configuration
        }
        var delay: TimeInterval = 1
        while true {
            do {
                let db = try PGConnection(configuration.database)
                let pending = try Migrator(directory: configuration.migrationsDirectory).pending(db)
                guard pending.isEmpty else {
                    logger.critical("the database schema is not current (pending: \(pending.joined(separator: ", "))); run `sileme-notifier migrate`")
                    return .configuration
                }
                try RowSecurity.verify(db)
                try CheckInTriggers.verify(db)
                return nil
            } catch let error as DatabaseError where error.kind == .unreachable && delay < 40 && !stopRequested {
                logger.warning("database unreachable at start: \(error); retrying in \(Int(delay)) s")
                systemd.status("waiting for the database")
                guard stop.sleep(delay) else { return .success }  // stopped while waiting: a clean exit
                delay *= 2
            } catch let error as DatabaseError {
                logger.critical("\(error)")
                return error.kind == .unreachable ? .unavailable : .failure
            } catch {
                logger.critical("\(error)")
                return .configuration
            }
        }
    }

    /// The mail templates and the page's texts load (else the configuration is refused); the
    /// page's texts, whose default language is the one the mail templates settled on.
    private static func validate(_ configuration: NotifierConfiguration) throws -> TextTable {
        let mailLanguage = try MailComposer(sending: configuration.mail).templates.defaultLanguage
        return try TextTable(file: TextTable.page, directory: configuration.mail.templateDirectory, defaultLanguage: mailLanguage)
    }

    /// `2026-01-14 09:00 +08` (seconds shown when not zero; offset minutes when not whole hours).
    package static func format(_ instant: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant)
        let offset = zone.secondsFromGMT(for: instant)
        let sign = offset < 0 ? "-" : "+"
        let hours = abs(offset) / 3600, minutes = abs(offset) % 3600 / 60
        let time = String(format: "%04d-%02d-%02d %02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!)
            + (c.second! == 0 ? "" : String(format: ":%02d", c.second!))
        return time + " " + sign + String(format: "%02d", hours) + (minutes == 0 ? "" : String(format: "%02d", minutes))
    }
}
