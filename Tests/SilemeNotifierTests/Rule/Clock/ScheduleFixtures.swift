import Foundation
@testable import Values
@testable import Rule

/// Helpers shared by the schedule tests. Instants are parsed with `ISO8601DateFormatter` and
/// local wall times read with a Gregorian `Calendar`, so the expectations do not depend on the
/// code under test.
enum ScheduleFixtures {
    /// The instant written as ISO 8601, e.g. `2026-03-08T07:30:00Z`; traps on a malformed literal.
    static func instant(_ text: String) -> Date {
        guard let date = ISO8601DateFormatter().date(from: text) else {
            preconditionFailure("bad ISO 8601 literal \(text)")
        }
        return date
    }

    /// The zone with IANA identifier `identifier`; traps if unknown.
    static func zone(_ identifier: String) -> TimeZone {
        guard let zone = TimeZone(identifier: identifier) else {
            preconditionFailure("unknown time zone \(identifier)")
        }
        return zone
    }

    /// The date written `YYYY-MM-DD`; traps on a malformed literal.
    static func date(_ text: String) -> CalendarDate {
        guard let date = CalendarDate(parsing: text) else {
            preconditionFailure("bad date literal \(text)")
        }
        return date
    }

    /// A schedule at `HH:MM` in the zone `identifier`.
    static func schedule(_ time: String, _ identifier: String) -> DailySchedule {
        let parts = time.split(separator: ":").compactMap { Int($0) }
        precondition(parts.count == 2, "bad time literal \(time)")
        return DailySchedule(time: TimeOfDay(hour: parts[0], minute: parts[1]), timeZone: zone(identifier))
    }

    /// What a wall clock in `zone` shows at `instant`, per Foundation's Gregorian calendar.
    static func wallClock(_ instant: Date, in zone: TimeZone) -> (date: String, time: String, second: Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant)
        let date = CalendarDate(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0)
        let time = TimeOfDay(hour: parts.hour ?? -1, minute: parts.minute ?? -1)
        return (date?.description ?? "invalid", time.description, parts.second ?? -1)
    }

    /// The fires whose dates lie in `first...last`, found by walking `nextFire(after:)` from
    /// noon UTC two days before `first` (so no fire of the range can be missed).
    static func walk(_ schedule: DailySchedule, from first: CalendarDate, through last: CalendarDate)
        -> [(date: CalendarDate, instant: Date)] {
        var now = Date(timeIntervalSince1970: TimeInterval(first.adding(days: -2).dayNumber * 86_400 + 43_200))
        var fires: [(date: CalendarDate, instant: Date)] = []
        while true {
            let fire = schedule.nextFire(after: now)
            if fire.date > last { return fires }
            if fire.date >= first { fires.append(fire) }
            now = fire.instant
        }
    }

    /// The fire instant for `date` by brute force, straight from the rules on `DailySchedule`:
    /// the first instant (scanned minute by minute) whose wall clock shows the configured time;
    /// if none does (a gap), the first instant after the gap.
    ///
    /// Only dates whose ±15 h neighbourhood contains an offset change are scanned; elsewhere the
    /// single offset gives the answer directly (checked). Minute steps suffice because every
    /// transition in the tested zones and years is on a minute boundary.
    static func bruteForceFire(_ schedule: DailySchedule, on date: CalendarDate) -> Date {
        let zone = schedule.timeZone
        func offset(_ second: Int) -> Int { zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(second))) }
        let wall = date.dayNumber * 86_400 + schedule.time.hour * 3_600 + schedule.time.minute * 60
        let low = wall - 15 * 3_600, high = wall + 15 * 3_600
        if offset(low) == offset(high) {
            let candidate = wall - offset(low)
            precondition(candidate + offset(candidate) == wall, "offset changes twice within 30 h")
            return Date(timeIntervalSince1970: TimeInterval(candidate))
        }
        for second in stride(from: low, through: high, by: 60) where second + offset(second) == wall {
            return Date(timeIntervalSince1970: TimeInterval(second))
        }
        for second in stride(from: low, through: high, by: 60) where second + offset(second) > wall {
            return Date(timeIntervalSince1970: TimeInterval(second))
        }
        preconditionFailure("no instant at or after \(schedule.time.description) on \(date.description)")
    }
}
