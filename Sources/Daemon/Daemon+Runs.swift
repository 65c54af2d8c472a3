import Delivery
import Foundation
import Rule
import Store
import Systemd
import Values

extension Daemon.Scheduler {
    /// The runs of `instant` for the users of `slots` (nil: everyone), one per run date, under the
    /// run lock. `known`: the slots as the decision read them a moment ago (not read again:
    /// 3,840 slots cost 23 ms at a million users, and a day has ~200 instants).
    func performRun(at instant: Date, slots: Set<String>?, known: NotifySlots, reason: NextAction.Reason) {
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
                                               logger: logger, host: daemon.host, sessions: sessions)
        } catch {
            logger.error("cannot read the users' times: \(error)", metadata: NotifierEvent.runFailed.metadata)
            backOffAfterFailure()
            return
        }
        let outcome = instantRuns.execute(stop: stop, afterFailure: .stop, started: clock.now(),
                                          starting: { self.daemon.control(for: $0, reason: reason) }, finished: finished)
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

    /// How a run ended (the `finished` hook, on the scheduler's thread): the last run for
    /// `STATUS=`, the heartbeat, and the back-off after a failure (errors not caused by a stop,
    /// or a throw).
    func finished(_ run: NotificationRun, _ result: Result<RunResult, any Error>) {
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
}

extension Daemon {
    /// A run's control as it starts (the `starting` hook): says the run in `STATUS=`, and feeds
    /// the watchdog (with the run's progress in `STATUS=`) from the run's own threads — which is
    /// why it is the daemon's (Sendable), not the scheduler's.
    func control(for run: NotificationRun, reason: NextAction.Reason) -> RunControl {
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
}
