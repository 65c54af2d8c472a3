import Foundation
import Values

/// Requests per client per minute (`ACK_RATE_LIMIT`): a fixed one-minute window per client, so a
/// guesser of tokens or a flood from one client gets HTTP 429 (with `Retry-After`).
///
/// A client is an IPv4 address, or an IPv6 address's /64 (what one host or home network holds:
/// a client that rotates its address within it is still one client). Memory is bounded without
/// ever refusing a newcomer: the table has two generations of at most `capacity` clients each;
/// when the current one is full it becomes the previous one and the old previous one is
/// forgotten. A flood of new addresses so only forgets old windows (the flooder's among them);
/// a person arriving during it is counted from zero, never locked out.
final class AddressLimiter: Sendable {
    /// What `allow` decided.
    enum Decision: Equatable {
        case allowed
        /// Over the limit; the window ends in this many seconds (at least 1).
        case limited(retryAfter: Int)
    }

    private struct Window {
        var start: TimeInterval
        var count: Int
    }

    private struct Table {
        var current: [String: Window] = [:]
        var previous: [String: Window] = [:]
    }

    private let perMinute: Int
    private let capacity: Int
    private let table = Locked(Table())

    init(perMinute: Int, capacity: Int = 50_000) {
        self.perMinute = perMinute
        self.capacity = capacity
    }

    /// Counts one request from `address` at `now` (seconds, monotonic or wall).
    func allow(_ address: String, now: TimeInterval) -> Decision {
        let client = Self.client(address)
        return table.withLock { table in
            var window = table.current[client] ?? table.previous.removeValue(forKey: client) ?? Window(start: now, count: 0)
            if now - window.start >= 60 { window = Window(start: now, count: 0) }
            window.count += 1
            if table.current[client] == nil && table.current.count >= capacity {
                table.previous = table.current
                table.current = [:]
            }
            table.current[client] = window
            guard window.count > perMinute else { return .allowed }
            return .limited(retryAfter: max(1, Int((window.start + 60 - now).rounded(.up))))
        }
    }

    /// The client an address stands for: an IPv6 address's first 64 bits (an IPv4-mapped one:
    /// the IPv4 address), an IPv4 address as it is; anything else as given.
    static func client(_ address: String) -> String {
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        return bytes[0..<8].map { String(format: "%02x", $0) }.joined() + "::/64"
    }
}
