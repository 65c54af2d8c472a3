import Foundation
import Testing
@testable import Rule

/// Zones far from UTC, where the local date differs from the UTC date most of the day.
@Suite("DailySchedule in zones far from UTC")
struct DailyScheduleFarZoneTests {
    typealias F = ScheduleFixtures

    @Test("Pacific/Kiritimati (UTC+14): the local day starts at 10:00Z the day before")
    func kiritimati() {
        let schedule = F.schedule("09:00", "Pacific/Kiritimati")
        #expect(schedule.runDate(at: F.instant("2026-06-14T09:59:59Z")) == F.date("2026-06-14"))
        #expect(schedule.runDate(at: F.instant("2026-06-14T10:00:00Z")) == F.date("2026-06-15"))
        #expect(schedule.fireInstant(on: F.date("2026-06-15")) == F.instant("2026-06-14T19:00:00Z"))
        let next = schedule.nextFire(after: F.instant("2026-06-14T18:59:59Z"))
        #expect(next.date == F.date("2026-06-15"))
        #expect(next.instant == F.instant("2026-06-14T19:00:00Z"))
        let latest = schedule.latestFire(atOrBefore: F.instant("2026-06-14T18:59:59Z"))
        #expect(latest.date == F.date("2026-06-14"))
        #expect(latest.instant == F.instant("2026-06-13T19:00:00Z"))
        // New Year arrives here first: 2027-01-01 09:00 local is still 2026 in UTC.
        let newYear = schedule.nextFire(after: F.instant("2026-12-31T12:00:00Z"))
        #expect(newYear.date == F.date("2027-01-01"))
        #expect(newYear.instant == F.instant("2026-12-31T19:00:00Z"))
    }

    @Test("Pacific/Pago_Pago (UTC-11): the local day starts at 11:00Z")
    func pagoPago() {
        let schedule = F.schedule("09:00", "Pacific/Pago_Pago")
        #expect(schedule.runDate(at: F.instant("2026-06-15T10:59:59Z")) == F.date("2026-06-14"))
        #expect(schedule.runDate(at: F.instant("2026-06-15T11:00:00Z")) == F.date("2026-06-15"))
        #expect(schedule.fireInstant(on: F.date("2026-06-15")) == F.instant("2026-06-15T20:00:00Z"))
        let next = schedule.nextFire(after: F.instant("2026-06-15T20:00:00Z"))
        #expect(next.date == F.date("2026-06-16"))
        #expect(next.instant == F.instant("2026-06-16T20:00:00Z"))
        let latest = schedule.latestFire(atOrBefore: F.instant("2026-06-16T10:00:00Z"))
        #expect(latest.date == F.date("2026-06-15"))
        // The last fire of 2026 happens in 2027 UTC.
        let lastMinute = F.schedule("23:59", "Pacific/Pago_Pago")
        let yearEnd = lastMinute.fireInstant(on: F.date("2026-12-31"))
        #expect(yearEnd == F.instant("2027-01-01T10:59:00Z"))
        #expect(lastMinute.runDate(at: yearEnd) == F.date("2026-12-31"))
        #expect(lastMinute.nextFire(after: yearEnd).date == F.date("2027-01-01"))
    }

    @Test("the same instant is a different run date on either side of the date line")
    func sameInstantTwoDates() {
        let instant = F.instant("2026-06-15T10:30:00Z")
        let east = F.schedule("09:00", "Pacific/Kiritimati")
        let west = F.schedule("09:00", "Pacific/Pago_Pago")
        #expect(east.runDate(at: instant) == F.date("2026-06-16"))
        #expect(west.runDate(at: instant) == F.date("2026-06-14"))
        #expect(east.runDate(at: instant).dayNumber - west.runDate(at: instant).dayNumber == 2)
    }
}
