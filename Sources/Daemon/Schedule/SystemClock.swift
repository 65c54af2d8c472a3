import Foundation

/// The real wall clock: `CLOCK_REALTIME`, as returned by `Date()`.
public struct SystemClock: Clock {
    /// Creates the system clock.
    public init() {}

    /// The current instant according to the system's wall clock.
    public func now() -> Date {
        Date()
    }
}
