import Foundation
import Rule

extension Daemon {
    /// Sleeps until `deadline` on the wall clock, waking for watchdog pings, and returning early on
    /// a stop or reload request or a wall-clock change (then the caller recomputes the schedule).
    func wait(until deadline: Date) {
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

    /// Sends `WATCHDOG=1` when half the watchdog interval has passed since the last ping; true
    /// when it did (or when there is no watchdog). Called from the scheduler's waits and from a
    /// run's threads, never from a free-running timer: a hung loop must miss its pings.
    @discardableResult
    func pingWatchdogIfDue() -> Bool {
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

extension Daemon.Scheduler {
    /// `STATUS=`'s tail while waiting: the next run (and whose times it serves, when not
    /// everyone's) and the last run.
    func waitingStatus(next slots: NotifySlots) -> String {
        let next = slots.nextFire(after: clock.now())
        let users = next.slots.count == slots.slots.count ? "" : " (\(next.slots.count) of \(slots.slots.count) users' times)"
        return "next run \(Daemon.format(next.instant, in: configuration.timeZone))\(users), last run: \(lastRun)"
    }
}
