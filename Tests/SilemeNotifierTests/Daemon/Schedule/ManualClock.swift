import Foundation
@testable import Daemon

/// A `Clock` for tests whose time only moves when told to (set or advanced), from any thread.
final class ManualClock: Clock, @unchecked Sendable {
    /// Guards `current`.
    private let lock = NSLock()
    /// The instant `now()` returns.
    private var current: Date

    /// Creates a clock reading `start`.
    init(_ start: Date) {
        current = start
    }

    /// The instant the clock was last set or advanced to.
    func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Sets the clock to `instant` (may go backwards, like a wall-clock step).
    func set(to instant: Date) {
        lock.lock()
        defer { lock.unlock() }
        current = instant
    }

    /// Moves the clock by `interval` seconds (negative moves it back).
    func advance(by interval: TimeInterval) {
        lock.lock()
        defer { lock.unlock() }
        current += interval
    }
}
