import Delivery
import Foundation
import Rule
import Store
import Systemd
import Values

extension Daemon {
    /// How often a daemon that finds the run lock taken looks for the run's sending to join.
    static let joinLookInterval: TimeInterval = 2

    /// The most a daemon that joined another's sending waits for that run to finish
    /// (`BoundedWait`): its messages in flight and the lifecycle's, usually seconds.
    static let joinedRunWaitSeconds: TimeInterval = 300
}

extension Daemon.Scheduler {
    /// Another run holds the run lock: for up to 30 s, every `joinLookInterval`, looks whether it
    /// opened its sending to others (`SharedSending`: after its first pass, which decided the
    /// guards, skips and holds) and joins the first of this instant's runs it finds open — not a
    /// retry's, which the holder's own claims finish. Returns at once when the lock is free.
    func joinOrWait(at instant: Date, slots: Set<String>?, known: NotifySlots, reason: NextAction.Reason) {
        systemd.status("another run is in progress on this database; last run: \(lastRun)")
        let deadline = clock.now().addingTimeInterval(30)
        guard reason != .retry else {
            logger.notice("another run holds the run lock; checking again in 30 s")
            return daemon.wait(until: deadline)
        }
        // The instant's runs are read once: what it serves does not change while the lock is held.
        let instantRuns: InstantRuns
        do {
            instantRuns = try InstantRuns.read(.instant(instant), configuration: configuration, mode: .join, among: slots,
                                               known: known, logger: logger, host: daemon.host, sessions: sessions)
        } catch {
            logger.error("cannot look for a run to join: \(error)")
            return daemon.wait(until: deadline)
        }
        let wanted = instantRuns.runs.map { (runDate: $0.runDate, slots: $0.scope.slots) }
        var toldWaiting = false
        while !stopRequested, !reloadRequested, clock.now() < deadline {
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
                return daemon.wait(until: deadline)
            }
            if !toldWaiting {
                logger.notice("another run holds the run lock; joining its sending once it is open, else checking again in 30 s")
                toldWaiting = true
            }
            daemon.wait(until: min(deadline, clock.now().addingTimeInterval(Daemon.joinLookInterval)))
        }
    }

    /// Sends with `open`, another daemon's run of `run`'s run date and slots, what this daemon
    /// claims of its alerts; the run then goes on without it, and this daemon decides afresh.
    private func join(_ open: SharedSending.Run, with run: NotificationRun, reason: NextAction.Reason) {
        joinedRuns.insert(open.id)
        if joinedRuns.count > 64 { joinedRuns = [open.id] }
        logger.notice("joining the sending of run \(open.id) for \(open.runDate) (\(open.jobs) messages)")
        let result = Result { try run.join(open, control: daemon.control(for: run, reason: reason)) }
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
                                 bound: Daemon.joinedRunWaitSeconds)
        do {
            _ = try finish.poll(every: 1, stop: stop, say: { logger.notice("\($0)") }, alive: { self.daemon.pingWatchdogIfDue() }) { _ -> Bool? in
                if reloadRequested { return true }
                guard let look = try? sessions.with({ try SharedSending.look($0, dates: [open.runDate]) }),
                      look.lockHeld, look.open.contains(where: { $0.id == open.id }) else { return true }
                return nil
            }
        } catch {
            logger.warning("\(error); this daemon decides afresh (a message the other run claimed is never sent twice)")
        }
    }
}
