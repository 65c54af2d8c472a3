import Foundation
import Testing
@testable import Reports

/// Times in the service zone, with its offset at each instant.
@Suite("History times")
struct HistoryTimeTests {
    @Test("ISO 8601 with the zone's offset at that instant", arguments: [
        ("Asia/Shanghai", 1_768_266_001.9, "2026-01-13T09:00:01+08:00"),
        ("UTC", 1_768_266_001, "2026-01-13T01:00:01+00:00"),
        ("America/New_York", 1_768_266_001, "2026-01-12T20:00:01-05:00"),
        ("America/New_York", 1_783_904_401, "2026-07-12T21:00:01-04:00"),
        ("Asia/Kolkata", 1_768_266_001, "2026-01-13T06:30:01+05:30"),
    ])
    func iso(zone: String, seconds: Double, text: String) {
        let time = HistoryTime(zone: TimeZone(identifier: zone)!)
        let date = Date(timeIntervalSince1970: seconds)
        #expect(time.iso(date) == text)
        #expect(time.full(date) == text.prefix(10) + " " + text.dropFirst(11).prefix(8) + " " + text.suffix(6))
    }

    @Test("short forms for the table")
    func short() {
        let time = HistoryTime(zone: TimeZone(identifier: "Asia/Shanghai")!)
        let date = Date(timeIntervalSince1970: 1_768_266_001)
        #expect(time.clock(date) == "09:00:01")
        #expect(time.dayAndMinute(date) == "01-13 09:00")
    }
}
