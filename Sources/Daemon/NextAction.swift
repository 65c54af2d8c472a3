import Foundation
import Rule
import Store
import Values

/// What the daemon does next — a pure function of the clock, the slots (docs/user-time.md),
/// what the database says about the run dates they are on, and the back-off after a failed run.
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
        /// Alerts held over an intake gap go out now (docs/intake-hold.md).
        package static let holdEnds: Reason = "held alerts released"
    }

    /// Run now, as of `instant`, for the users of `slots` (nil: every user) — each on the date of
    /// their latest notify instant; `reason` says why.
    case run(at: Date, slots: Set<String>?, reason: Reason)
    /// The last run failed: wait until the back-off ends (or the next notify instant, if earlier).
    case waitAfterFailure(until: Date)
    /// Failed messages are due again at this instant, before the next notify instant.
    case waitForRetry(until: Date)
    /// Held alerts go out at this instant (their hold ends), before the next notify instant.
    case waitForHoldEnd(until: Date)
    /// Nothing to do until the next notify instant.
    case waitForNextRun(until: Date)

    /// The decision at `now` over the slots (docs/user-time.md): a run for the slots
    /// whose latest notify instant has no completed run (a catch-up after downtime included: an
    /// instant more than a minute ago, every missed one served at once with the real count of
    /// days), a retry pass when failed messages of those dates are due again (until the next
    /// instant, whatever the hour), a run when held alerts' hold ends, or a wait for whichever
    /// comes first of the next notify instant, the next retry and the next hold's end. `state` is what the database says about the dates the slots' latest
    /// instants are on; `notBefore` ends the back-off after a failed run.
    package static func decide(now: Date, slots: NotifySlots, state: DaemonState, notBefore: Date) -> NextAction {
        let fires = slots.latestFires(atOrBefore: now)
        let next = slots.nextFire(after: now).instant
        if now < notBefore { return .waitAfterFailure(until: min(notBefore, next)) }
        let pending = fires.filter { !(state.completed[$0.date]?.covers($0.slot.key) ?? false) }
        if !pending.isEmpty {
            let reason: Reason = pending.contains { state.started[$0.date]?.covers($0.slot.key) ?? false } ? .unfinished
                : pending.contains { now.timeIntervalSince($0.instant) > 60 } ? .catchUp : .scheduled
            return .run(at: now, slots: pending.count == fires.count ? nil : Set(pending.map(\.slot.key)), reason: reason)
        }
        // Retries of the latest runs' failures, until the next instant takes over (never cut off
        // by a zone's midnight: an alert that failed at 23:40 is retried at 00:10 all the same);
        // and the end of a hold, whenever it comes: a run of everyone, which sends what was held.
        let wakes = [state.nextRetry.map { ($0, Reason.retry) }, state.nextRelease.map { ($0, Reason.holdEnds) }]
            .compactMap { $0 }.sorted { $0.0 < $1.0 }
        if let (at, reason) = wakes.first {
            if at <= now { return .run(at: now, slots: nil, reason: reason) }
            if at < next { return reason == .retry ? .waitForRetry(until: at) : .waitForHoldEnd(until: at) }
        }
        return .waitForNextRun(until: next)
    }

    /// The run dates of the slots' latest notify instants at `now` (what `DaemonState.read` reads).
    package static func dates(now: Date, slots: NotifySlots) -> [CalendarDate] {
        Array(Set(slots.latestFires(atOrBefore: now).map(\.date))).sorted()
    }
}
