import Foundation

/// The real wall clock: `CLOCK_REALTIME`, as returned by `Date()`.
package struct SystemClock: Clock {
    /// Creates the system clock.
    package init() {}

    /// The current instant according to the system's wall clock.
    package func now() -> Date {
        Date()
    }
}
