import Foundation
import Values

/// Requests per client address per minute (`ACK_RATE_LIMIT`): a fixed one-minute window per
/// address, so a guesser of tokens or a flood from one address gets HTTP 429. Bounded memory:
/// the table is emptied of old windows when it grows past `capacity` addresses, and refuses new
/// addresses while it cannot (a flood from many addresses is the proxy's to stop).
final class AddressLimiter: Sendable {
    private let perMinute: Int
    private let capacity: Int
    private let windows = Locked<[String: (start: TimeInterval, count: Int)]>([:])

    init(perMinute: Int, capacity: Int = 50_000) {
        self.perMinute = perMinute
        self.capacity = capacity
    }

    /// Counts one request from `address` at `now` (seconds, monotonic or wall); false when over the limit.
    func allow(_ address: String, now: TimeInterval) -> Bool {
        windows.withLock { windows in
            if windows.count >= capacity {
                windows = windows.filter { now - $0.value.start < 60 }
                if windows.count >= capacity && windows[address] == nil { return false }
            }
            var window = windows[address] ?? (now, 0)
            if now - window.start >= 60 { window = (now, 0) }
            window.count += 1
            windows[address] = window
            return window.count <= perMinute
        }
    }
}
