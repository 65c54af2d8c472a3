import Foundation
import Values

/// `SMTP_RATE_LIMIT`: at most `perSecond` messages per second across all of a run's connections,
/// spaced evenly (a token bucket of one), so that a provider's sending limit is never exceeded.
/// Shared by a run's senders: Sendable, checked — its one changing value is `Locked`.
package final class RateLimiter: Sendable {
    private let interval: TimeInterval
    private let next = Locked(Date.distantPast)

    /// A limiter for `perSecond` messages per second.
    package init(perSecond: Double) { interval = 1 / perSecond }

    /// Waits until the next message may go; false when `stop` was raised first (send nothing then).
    package func acquire(stop: StopSignal) -> Bool {
        let wait = next.withLock { next -> TimeInterval in
            let now = Date()
            let slot = max(now, next)
            next = slot.addingTimeInterval(interval)
            return slot.timeIntervalSince(now)
        }
        return wait <= 0 ? !stop.isStopped : stop.sleep(wait)
    }
}
