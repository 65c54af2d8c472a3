/// A wall-clock time of day, as `NOTIFY_TIME` is written: `HH:MM`, or `HH:MM:SS` for tests and
/// for sites that want a precise second.
package struct TimeOfDay: Sendable, Equatable, CustomStringConvertible {
    /// 0–23.
    package let hour: Int
    /// 0–59.
    package let minute: Int
    /// 0–59.
    package let second: Int

    /// Creates a time; callers validate ranges (see `init?(parsing:)`).
    package init(hour: Int, minute: Int, second: Int = 0) {
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Parses `H:MM`, `HH:MM` or `HH:MM:SS` (24-hour clock); nil when malformed or out of range.
    package init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), (1...2).contains(parts[0].count),
              parts.dropFirst().allSatisfy({ $0.count == 2 }),
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let h = Int(parts[0]), let m = Int(parts[1]),
              (0...23).contains(h), (0...59).contains(m) else { return nil }
        let s = parts.count == 3 ? Int(parts[2]) ?? 99 : 0
        guard (0...59).contains(s) else { return nil }
        self.init(hour: h, minute: m, second: s)
    }

    package var description: String {
        let hm = (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
        return second == 0 ? hm : hm + (second < 10 ? ":0" : ":") + "\(second)"
    }
}
