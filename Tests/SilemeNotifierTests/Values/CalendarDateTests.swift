import Foundation
import Testing
@testable import Values

@Suite("CalendarDate")
struct CalendarDateTests {
    @Test("parses and prints YYYY-MM-DD, rejecting impossible dates",
          arguments: ["2026-01-13", "2024-02-29", "2000-02-29", "1970-01-01", "2099-12-31"])
    func roundTrip(text: String) throws {
        let date = try #require(CalendarDate(parsing: text))
        #expect(date.description == text)
    }

    @Test("rejects malformed or impossible dates",
          arguments: ["2026-02-29", "1900-02-29", "2026-13-01", "2026-00-10", "2026-1-13", "20260113", "2026-01-32", "２０２６-01-01", "",
                     "2026-01-131", "2026-01-13 ", " 2026-01-13", "+026-01-13", "2026/01/13", "2026-01-1x", "2026-01-٣١"])
    func rejects(text: String) {
        #expect(CalendarDate(parsing: text) == nil)
    }

    @Test("day arithmetic is exact across month, year and leap-day boundaries")
    func arithmetic() throws {
        let newYear = try #require(CalendarDate(parsing: "2026-01-01"))
        #expect(newYear.adding(days: -1).description == "2025-12-31")
        let leap = try #require(CalendarDate(parsing: "2024-02-28"))
        #expect(leap.adding(days: 1).description == "2024-02-29")
        #expect(leap.adding(days: 2).description == "2024-03-01")
        #expect(try #require(CalendarDate(parsing: "2026-03-01")).days(since: try #require(CalendarDate(parsing: "2026-02-27"))) == 2)
        #expect(CalendarDate(dayNumber: 0).description == "1970-01-01")
        #expect(CalendarDate(year: 5, month: 3, day: 9)?.description == "0005-03-09")
        #expect(CalendarDate(parsing: "0005-03-09") == CalendarDate(year: 5, month: 3, day: 9))
        #expect(CalendarDate(parsing: "x2026-01-13y".dropFirst().dropLast())?.description == "2026-01-13")
        // Every day of four years round-trips through components.
        for n in 20000..<21461 {
            let d = CalendarDate(dayNumber: n)
            let (y, m, day) = d.components
            #expect(CalendarDate(year: y, month: m, day: day) == d)
        }
    }

    @Test("today in a zone is that zone's calendar date")
    func todayInZone() throws {
        // 2026-01-12T17:30:00Z is 2026-01-13 01:30 in Shanghai and still 2026-01-12 in New York.
        let instant = Date(timeIntervalSince1970: 1_768_239_000)
        #expect(CalendarDate(instant, in: try #require(TimeZone(identifier: "Asia/Shanghai"))).description == "2026-01-13")
        #expect(CalendarDate(instant, in: try #require(TimeZone(identifier: "America/New_York"))).description == "2026-01-12")
    }

    @Test("RFC 3339 UTC to the second, before 1970 and on leap days too")
    func rfc3339() {
        #expect(CalendarDate.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(CalendarDate.rfc3339(Date(timeIntervalSince1970: 1_614_265_330.999)) == "2021-02-25T15:02:10Z")
        #expect(CalendarDate.rfc3339(Date(timeIntervalSince1970: 951_825_599)) == "2000-02-29T11:59:59Z")
        #expect(CalendarDate.rfc3339(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        #expect(CalendarDate.rfc3339(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59Z")
        #expect(CalendarDate.rfc3339(Date(timeIntervalSince1970: -86400)) == "1969-12-31T00:00:00Z")
        // At an offset (the standard-error log's local time): the local date and time, and the offset.
        #expect(CalendarDate.rfc3339(Date(timeIntervalSince1970: 1_768_239_000), utcOffset: 8 * 3600) == "2026-01-13T01:30:00+08:00")
        #expect(CalendarDate.rfc3339(Date(timeIntervalSince1970: 1_768_239_000), utcOffset: -(5 * 3600 + 1800)) == "2026-01-12T12:00:00-05:30")
    }
}
