import Foundation

/// A source of the current wall-clock instant.
///
/// The scheduler asks a `Clock` rather than calling `Date()` directly so that tests can
/// drive it with a manual clock. Within this module the name shadows the standard
/// library's unrelated `Swift.Clock` protocol (the one behind `ContinuousClock`).
package protocol Clock: Sendable {
    /// The current instant (wall-clock / `CLOCK_REALTIME` time).
    func now() -> Date
}
