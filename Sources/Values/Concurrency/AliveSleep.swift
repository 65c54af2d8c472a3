import Foundation

/// Sleeping without going silent: a wait of many seconds (a retry backoff, a reconnect delay)
/// in slices of at most one second, telling the daemon it is alive after each slice, so that its
/// watchdog keeps being fed from the real work loop.
package enum AliveSleep {
    /// Sleeps `seconds`, calling `alive` after every second (and after the last slice).
    package static func sleep(_ seconds: TimeInterval, alive: () -> Void) {
        var left = seconds
        while left > 0 {
            Thread.sleep(forTimeInterval: min(1, left))
            left -= 1
            alive()
        }
    }
}
