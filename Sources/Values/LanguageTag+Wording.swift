import Foundation

extension LanguageTag {
    /// "2 days", "2 天", "2 дня", "5 дней": a count of days written for the language by
    /// Foundation's unit formatter, which carries ICU's (CLDR's) plural rules — never by rules of
    /// our own, which get Russian, Arabic or Polish wrong.
    package func days(_ count: Int) -> String {
        Duration.seconds(Int64(count) * 86_400).formatted(.units(allowed: [.days], width: .wide).locale(locale))
    }

    /// A calendar date written in full for the language ("May 29, 2026", "2026年5月29日",
    /// "29 мая 2026 г."), as a date of the calendar: it names the same day in every time zone.
    package func date(_ date: CalendarDate) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let (year, month, day) = date.components
        guard let instant = calendar.date(from: DateComponents(year: year, month: month, day: day)) else { return "\(date)" }
        return instant.formatted(Date.FormatStyle(date: .long, time: .omitted, locale: locale, calendar: calendar, timeZone: calendar.timeZone))
    }
}
