import Foundation
import Values

/// Formats the report's instants in the service zone: ISO 8601 with the offset for JSON and CSV
/// (`2026-01-13T09:00:01+08:00`), short forms for the table and HTML.
///
/// Arithmetic on whole seconds (the zone's offset at the instant, then `CalendarDate`'s day
/// math) rather than `Calendar` and `String(format:)`: a year's report formats millions of times.
package struct HistoryTime: Sendable {
    /// The zone times are shown in.
    package let zone: TimeZone

    /// Formats in `zone`.
    package init(zone: TimeZone) { self.zone = zone }

    /// The local date and time of `date`, and the zone's offset then (seconds east of UTC).
    private func local(_ date: Date) -> (day: CalendarDate, second: Int, offset: Int) {
        let offset = zone.secondsFromGMT(for: date)
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + offset
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        return (CalendarDate(dayNumber: day), seconds - day * 86_400, offset)
    }

    /// `2026-01-13T09:00:01+08:00` (whole seconds).
    package func iso(_ date: Date) -> String {
        let (day, second, offset) = local(date)
        let minutes = abs(offset) / 60
        return Self.day(day) + "T" + Self.clock(second) + (offset < 0 ? "-" : "+")
            + Self.two(minutes / 60) + ":" + Self.two(minutes % 60)
    }

    /// `09:00:01`.
    package func clock(_ date: Date) -> String { Self.clock(local(date).second) }

    /// `01-13 09:00`.
    package func dayAndMinute(_ date: Date) -> String {
        let (day, second, _) = local(date)
        return String(Self.day(day).dropFirst(5)) + " " + Self.two(second / 3600) + ":" + Self.two(second / 60 % 60)
    }

    /// `01-13 09:00:01`.
    package func dayAndSecond(_ date: Date) -> String {
        let (day, second, _) = local(date)
        return String(Self.day(day).dropFirst(5)) + " " + Self.clock(second)
    }

    /// `2026-01-13 09:00:01 +08:00`, for people.
    package func full(_ date: Date) -> String {
        let text = iso(date)
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(8)) + " " + String(text.suffix(6))
    }

    /// `YYYY-MM-DD`, the same as `CalendarDate.description` without `String(format:)`.
    package static func day(_ date: CalendarDate) -> String {
        let (y, m, d) = date.components
        guard (0...9999).contains(y) else { return date.description }
        let year = String(y)
        return String(repeating: "0", count: 4 - year.count) + year + "-" + two(m) + "-" + two(d)
    }

    private static func clock(_ second: Int) -> String {
        two(second / 3600) + ":" + two(second / 60 % 60) + ":" + two(second % 60)
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0" + String(value) : String(value) }
}
