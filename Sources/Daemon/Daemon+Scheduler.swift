import AckPage
import Config
import Delivery
import Foundation
import Logging
import Rule
import Store
import Systemd
import Values

extension Daemon {
    /// The scheduler: the daemon's own loop, on its thread (`sileme-scheduler`), with the state
    /// only that loop changes — the configuration since the last reload, the last run, the
    /// back-off, the slots as last read, the runs joined. Made on that thread and never handed to
    /// another: it is not Sendable, so the compiler keeps it there, and its state needs no lock
    /// (the daemon, which every part shares, holds nothing that changes without one).
    final class Scheduler {
        let daemon: Daemon
        /// The configuration in force: the daemon's at start, a reload's after (`reload()`); each
        /// change is shown to the all-clear thread (`Daemon.shared`).
        var configuration: NotifierConfiguration {
            didSet { daemon.shared.withLock { $0 = configuration } }
        }
        /// How the last run ended, for `STATUS=`.
        var lastRun = "none yet"
        /// Failed runs in a row: the back-off's exponent (`backOffAfterFailure`).
        var failedRuns = 0
        /// No run starts before this (the back-off after a failure).
        var notBefore: Date = .distantPast
        /// The latest run date retention was applied for (by this process).
        var retainedThrough = CalendarDate(dayNumber: 0)
        /// The slots as the last look read them: kept while nobody's slot changes, so that a
        /// look a minute is one probe, and thousands of slots are resolved only when one changed.
        var knownSlots: SlotSQL.Known?
        /// The runs whose sending this daemon joined (each once: then their holder finishes alone).
        var joinedRuns: Set<Int64> = []

        /// The scheduler of `daemon`, with the configuration it started with.
        init(_ daemon: Daemon) {
            self.daemon = daemon
            configuration = daemon.configuration
        }

        // The daemon's shared parts, as the scheduler uses them.
        var logger: Logger { daemon.logger }
        var systemd: SystemdNotifier { daemon.systemd }
        var clock: any Clock { daemon.clock }
        var stop: StopSignal { daemon.stop }
        var sessions: SessionKeeper { daemon.sessions }
        var stopRequested: Bool { daemon.stopRequested }
        var reloadRequested: Bool { daemon.reloadRequested.withLock { $0 } }
    }

    /// How often the daemon looks at the slots again (one probe while nobody's changed).
    static let slotsInterval: TimeInterval = 60
}

/// The scheduler's state belongs to its thread: no `Sendable`, ever.
@available(*, unavailable)
extension Daemon.Scheduler: Sendable {}

extension Daemon.Scheduler {
    /// The scheduler's loop: says `READY` once the page listens, then serves each instant until
    /// the stop signal; `STOPPING=1` at the end.
    func run(page: AckPageServer?, startup: Startup) -> ExitStatus {
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
            if reloadRequested { reload() }
            daemon.pingWatchdogIfDue()
            do {
                let now = clock.now()
                let (slots, action) = try look(now: now)
                // A user who changes their zone or time is seen within a minute.
                let lookAgain = now.addingTimeInterval(Daemon.slotsInterval)
                switch action {
                case .run(let instant, let only, let reason):
                    performRun(at: instant, slots: only, known: slots, reason: reason)
                case .waitAfterFailure(let deadline):
                    systemd.status("last run failed; trying again at \(Daemon.format(notBefore, in: configuration.timeZone)); last run: \(lastRun)")
                    daemon.wait(until: min(deadline, lookAgain))
                case .waitForRetry(let deadline):
                    systemd.status("retry of failed mails at \(Daemon.format(deadline, in: configuration.timeZone)); " + waitingStatus(next: slots))
                    daemon.wait(until: min(deadline, lookAgain))
                case .waitForHoldEnd(let deadline):
                    systemd.status("alerts held over an intake gap go out at \(Daemon.format(deadline, in: configuration.timeZone)); "
                                   + waitingStatus(next: slots))
                    daemon.wait(until: min(deadline, lookAgain))
                case .waitForNextRun(let deadline):
                    systemd.status("waiting; " + waitingStatus(next: slots))
                    daemon.wait(until: min(deadline, lookAgain))
                }
                databaseBackoff = 0
            } catch {
                databaseBackoff = min(300, max(5, databaseBackoff * 2))
                logger.error("database unavailable: \(error); retrying in \(Int(databaseBackoff)) s",
                             metadata: NotifierEvent.databaseUnavailable.metadata)
                systemd.status("database unavailable; retrying in \(Int(databaseBackoff)) s; last run: \(lastRun)")
                daemon.wait(until: clock.now().addingTimeInterval(databaseBackoff))
            }
        }
        systemd.stopping(status: "stopping; last run: \(lastRun)")
        logger.notice("daemon stopped", metadata: NotifierEvent.daemonStopped.metadata)
        return .success
    }

    // MARK: Deciding

    /// The service's own slot only (before the database has answered).
    var serviceSlots: NotifySlots { NotifySlots(keys: [], service: configuration.schedule) }

    /// The slots, read now.
    func currentSlots() throws -> NotifySlots {
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
}
