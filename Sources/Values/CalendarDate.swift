import Foundation

/// A calendar date with no time and no zone (`2026-01-13`), the unit the rule counts in.
///
/// Arithmetic goes through days since 1970-01-01 (proleptic Gregorian), so differences are
/// exact across months, years and leap days, and independent of any time zone or DST.
package struct CalendarDate: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// Days since 1970-01-01 (negative before).
    package let dayNumber: Int

    /// The date `dayNumber` days after 1970-01-01.
    package init(dayNumber: Int) { self.dayNumber = dayNumber }

    /// The given proleptic Gregorian date; nil when it does not exist (e.g. February 30).
    package init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year) else { return nil }
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        self.dayNumber = era * 146097 + doe - 719468
    }

    /// Parses `YYYY-MM-DD` (ASCII digits only); nil when malformed or not a real date.
    package init?(parsing text: some StringProtocol) {
        // One pass over the bytes: every date of every listed user goes through here.
        var fields = (year: 0, month: 0, day: 0)
        var length = 0
        for byte in text.utf8 {
            guard length < 10 else { return nil }
            if length == 4 || length == 7 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let digit = Int(byte - UInt8(ascii: "0"))
                switch length {
                case ..<4: fields.year = fields.year * 10 + digit
                case ..<7: fields.month = fields.month * 10 + digit
                default: fields.day = fields.day * 10 + digit
                }
            }
            length += 1
        }
        guard length == 10 else { return nil }
        self.init(year: fields.year, month: fields.month, day: fields.day)
    }

    /// The calendar date in `zone` at the instant `date`.
    package init(_ date: Date, in zone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        self.init(year: c.year!, month: c.month!, day: c.day!)!
    }

    /// Year, month and day.
    package var components: (year: Int, month: Int, day: Int) {
        // Howard Hinnant's civil_from_days.
        let z = dayNumber + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// This date moved by `days` (negative moves back).
    package func adding(days: Int) -> CalendarDate { CalendarDate(dayNumber: dayNumber + days) }

    /// Whole days from `other` to `self` (`self − other`).
    package func days(since other: CalendarDate) -> Int { dayNumber - other.dayNumber }

    /// `YYYY-MM-DD`.
    package var description: String {
        let (y, m, d) = components
        guard (0...9999).contains(y) else {
            func pad(_ n: Int, _ width: Int) -> String {
                let digits = String(n)
                return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
            }
            return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
        }
        // Ten ASCII bytes written in place (the reports print a date or two per row).
        return String(unsafeUninitializedCapacity: 10) { buffer in
            func put(_ value: Int, at start: Int, width: Int) {
                var rest = value
                for position in (start..<start + width).reversed() {
                    buffer[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(y, at: 0, width: 4)
            buffer[4] = UInt8(ascii: "-")
            put(m, at: 5, width: 2)
            buffer[7] = UInt8(ascii: "-")
            put(d, at: 8, width: 2)
            return 10
        }
    }

    /// The instant `date` in RFC 3339 to the second (the fraction truncated) at `utcOffset`
    /// seconds east of UTC: `2026-01-13T01:00:00Z`, or `2026-01-13T09:00:00+08:00`. Plain
    /// arithmetic: the log writes one per line, and a Foundation date formatter per call cost a
    /// quarter of a run's CPU.
    package static func rfc3339(_ date: Date, utcOffset: Int = 0) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + utcOffset
        let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86400)
        let (day, second) = secondOfDay < 0 ? (days - 1, secondOfDay + 86400) : (days, secondOfDay)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let zone = utcOffset == 0
            ? "Z" : (utcOffset < 0 ? "-" : "+") + two(abs(utcOffset) / 3600) + ":" + two(abs(utcOffset) / 60 % 60)
        return "\(CalendarDate(dayNumber: day))T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))" + zone
    }

    /// `YYYYMMDD`, for identifiers.
    package var compact: String { description.replacingOccurrences(of: "-", with: "") }

    package static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = CalendarDate(parsing: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a YYYY-MM-DD date: \(text)"))
        }
        self = date
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
