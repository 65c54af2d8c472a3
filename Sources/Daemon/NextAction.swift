import Foundation
import Rule
import Store
import Values

/// What the daemon does next — a pure function of the clock, the schedule, what the database says
/// about the latest scheduled run date, and the back-off after a failed run.
package enum NextAction: Equatable, Sendable {
    /// Why the daemon runs: in its status line, and `retry` (a pass for the failed mails of a
    /// completed run) is also what keeps retention to the daily run.
    package struct Reason: RawRepresentable, Equatable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package init(stringLiteral value: String) { rawValue = value }
        package var description: String { rawValue }

        /// The fire time has just come.
        package static let scheduled: Reason = "scheduled"
        /// The fire time passed over a minute ago (the daemon was down).
        package static let catchUp: Reason = "catch-up"
        /// The date's run started and never completed.
        package static let unfinished: Reason = "retrying an unfinished run"
        /// The date's run completed; some of its mails failed and are due again now.
        package static let retry: Reason = "retry"
    }

    /// Run for this date now; `reason` says why.
    case run(CalendarDate, reason: Reason)
    /// The last run failed: wait until the back-off ends (or the next fire time, if earlier).
    case waitAfterFailure(until: Date)
    /// Failed mails of today are due again at this instant, before the next fire time.
    case waitForRetry(until: Date)
    /// Nothing to do until the next fire time.
    case waitForNextRun(until: Date)

    /// The decision at `now`: the latest scheduled run if it has not completed (catch-up after
    /// downtime included: a fire more than a minute ago), a retry pass when failed mails of that
    /// date are due again (until the next fire, whatever the hour), or a wait for whichever comes first
    /// of the next fire time and the next retry. `state` is what the database says about the
    /// latest fire's date; `notBefore` ends the back-off after a failed run.
    package static func decide(now: Date, schedule: DailySchedule, state: DaemonState, notBefore: Date) -> NextAction {
        let latest = schedule.latestFire(atOrBefore: now)
        let next = schedule.nextFire(after: now)
        if now < notBefore { return .waitAfterFailure(until: min(notBefore, next.instant)) }
        if !state.completed {
            let reason: Reason = state.started ? .unfinished : (now.timeIntervalSince(latest.instant) > 60 ? .catchUp : .scheduled)
            return .run(latest.date, reason: reason)
        }
        // Retries of the latest run's failures, until the next fire takes over (never cut off by
        // the zone's midnight: an alert that failed at 23:40 is retried at 00:10 all the same).
        if let retryAt = state.nextRetry {
            if retryAt <= now { return .run(latest.date, reason: .retry) }
            if retryAt < next.instant { return .waitForRetry(until: retryAt) }
        }
        return .waitForNextRun(until: next.instant)
    }
}
