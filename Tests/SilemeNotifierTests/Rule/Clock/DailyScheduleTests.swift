import Foundation
import Testing
@testable import Values
@testable import Rule

/// Basic behaviour at a fixed offset (Asia/Shanghai, UTC+8, no DST since 1991): strict
/// "after" / inclusive "at or before", run dates, and month, year and leap-day boundaries.
@Suite("DailySchedule basics (Asia/Shanghai)")
struct DailyScheduleTests {
    let nine = ScheduleFixtures.schedule("09:00", "Asia/Shanghai")

    @Test("next fire from 08:59:59 local is 09:00 the same day (01:00:00Z)")
    func nextFireJustBefore() {
        let fire = nine.nextFire(after: ScheduleFixtures.instant("2026-05-10T00:59:59Z"))
        #expect(fire.date == ScheduleFixtures.date("2026-05-10"))
        #expect(fire.instant == ScheduleFixtures.instant("2026-05-10T01:00:00Z"))
    }

    @Test("next fire from exactly 09:00:00 is the next day (strictly after)")
    func nextFireAtFireInstant() {
        let fire = nine.nextFire(after: ScheduleFixtures.instant("2026-05-10T01:00:00Z"))
        #expect(fire.date == ScheduleFixtures.date("2026-05-11"))
        #expect(fire.instant == ScheduleFixtures.instant("2026-05-11T01:00:00Z"))
        let justAfter = nine.nextFire(after: ScheduleFixtures.instant("2026-05-10T01:00:00Z") + 0.001)
        #expect(justAfter.date == ScheduleFixtures.date("2026-05-11"))
        let justBefore = nine.nextFire(after: ScheduleFixtures.instant("2026-05-10T01:00:00Z") - 0.001)
        #expect(justBefore.date == ScheduleFixtures.date("2026-05-10"))
    }

    @Test("latest fire at exactly 09:00:00 is today; at 08:59 it is yesterday")
    func latestFire() {
        let atNine = nine.latestFire(atOrBefore: ScheduleFixtures.instant("2026-05-10T01:00:00Z"))
        #expect(atNine.date == ScheduleFixtures.date("2026-05-10"))
        #expect(atNine.instant == ScheduleFixtures.instant("2026-05-10T01:00:00Z"))

        let atEightFiftyNine = nine.latestFire(atOrBefore: ScheduleFixtures.instant("2026-05-10T00:59:00Z"))
        #expect(atEightFiftyNine.date == ScheduleFixtures.date("2026-05-09"))
        #expect(atEightFiftyNine.instant == ScheduleFixtures.instant("2026-05-09T01:00:00Z"))

        let aHairBefore = nine.latestFire(atOrBefore: ScheduleFixtures.instant("2026-05-10T01:00:00Z") - 0.001)
        #expect(aHairBefore.date == ScheduleFixtures.date("2026-05-09"))

        let lateEvening = nine.latestFire(atOrBefore: ScheduleFixtures.instant("2026-05-10T15:59:59Z"))
        #expect(lateEvening.date == ScheduleFixtures.date("2026-05-10"))
    }

    @Test("catch-up: started at 10:00 local, the latest fire is today's 09:00")
    func catchUpAtTen() {
        let startedAt = ScheduleFixtures.instant("2026-05-10T02:00:00Z")
        let fire = nine.latestFire(atOrBefore: startedAt)
        #expect(fire.date == nine.runDate(at: startedAt))
        #expect(fire.instant == ScheduleFixtures.instant("2026-05-10T01:00:00Z"))
    }

    @Test("runDate flips at local midnight (16:00Z), not UTC midnight")
    func runDateAtLocalMidnight() {
        #expect(nine.runDate(at: ScheduleFixtures.instant("2026-05-09T15:59:59Z")) == ScheduleFixtures.date("2026-05-09"))
        #expect(nine.runDate(at: ScheduleFixtures.instant("2026-05-09T16:00:00Z")) == ScheduleFixtures.date("2026-05-10"))
        #expect(nine.runDate(at: ScheduleFixtures.instant("2026-05-10T00:00:00Z")) == ScheduleFixtures.date("2026-05-10"))
    }

    @Test("month end: Jan 31 → Feb 1, Apr 30 → May 1")
    func monthEnd() {
        let fromJan31 = nine.nextFire(after: ScheduleFixtures.instant("2026-01-31T01:00:00Z"))
        #expect(fromJan31.date == ScheduleFixtures.date("2026-02-01"))
        #expect(fromJan31.instant == ScheduleFixtures.instant("2026-02-01T01:00:00Z"))
        let fromApr30 = nine.nextFire(after: ScheduleFixtures.instant("2026-04-30T01:00:00Z"))
        #expect(fromApr30.date == ScheduleFixtures.date("2026-05-01"))
        let beforeFeb1 = nine.latestFire(atOrBefore: ScheduleFixtures.instant("2026-02-01T00:30:00Z"))
        #expect(beforeFeb1.date == ScheduleFixtures.date("2026-01-31"))
    }

    @Test("year end: Dec 31 → Jan 1")
    func yearEnd() {
        let fire = nine.nextFire(after: ScheduleFixtures.instant("2026-12-31T01:00:00Z"))
        #expect(fire.date == ScheduleFixtures.date("2027-01-01"))
        #expect(fire.instant == ScheduleFixtures.instant("2027-01-01T01:00:00Z"))
        let latest = nine.latestFire(atOrBefore: ScheduleFixtures.instant("2027-01-01T00:59:59Z"))
        #expect(latest.date == ScheduleFixtures.date("2026-12-31"))
        #expect(latest.instant == ScheduleFixtures.instant("2026-12-31T01:00:00Z"))
    }

    @Test("leap day: 2028-02-28 → 02-29 → 03-01, while 2027-02-28 → 03-01")
    func leapDay() {
        let leap = nine.nextFire(after: ScheduleFixtures.instant("2028-02-28T01:00:00Z"))
        #expect(leap.date == ScheduleFixtures.date("2028-02-29"))
        #expect(leap.instant == ScheduleFixtures.instant("2028-02-29T01:00:00Z"))
        let after = nine.nextFire(after: leap.instant)
        #expect(after.date == ScheduleFixtures.date("2028-03-01"))
        #expect(after.instant == ScheduleFixtures.instant("2028-03-01T01:00:00Z"))
        let common = nine.nextFire(after: ScheduleFixtures.instant("2027-02-28T01:00:00Z"))
        #expect(common.date == ScheduleFixtures.date("2027-03-01"))
        #expect(nine.fireInstant(on: ScheduleFixtures.date("2028-02-29")) == ScheduleFixtures.instant("2028-02-29T01:00:00Z"))
    }

    @Test("times before 08:00 local fire on the previous UTC day but belong to the local date")
    func earlyTimesCrossUTCDate() {
        let halfPastMidnight = ScheduleFixtures.schedule("00:30", "Asia/Shanghai")
        let newYear = ScheduleFixtures.date("2027-01-01")
        #expect(halfPastMidnight.fireInstant(on: newYear) == ScheduleFixtures.instant("2026-12-31T16:30:00Z"))
        #expect(halfPastMidnight.runDate(at: ScheduleFixtures.instant("2026-12-31T16:30:00Z")) == newYear)
        let fire = halfPastMidnight.nextFire(after: ScheduleFixtures.instant("2026-12-31T12:00:00Z"))
        #expect(fire.date == newYear)

        let midnight = ScheduleFixtures.schedule("00:00", "Asia/Shanghai")
        #expect(midnight.fireInstant(on: newYear) == ScheduleFixtures.instant("2026-12-31T16:00:00Z"))
        let lastMinute = ScheduleFixtures.schedule("23:59", "Asia/Shanghai")
        #expect(lastMinute.fireInstant(on: ScheduleFixtures.date("2026-12-31")) == ScheduleFixtures.instant("2026-12-31T15:59:00Z"))
    }

    @Test("fire instants are whole seconds and show the configured wall time")
    func fireInstantShowsWallTime() {
        let schedule = ScheduleFixtures.schedule("07:05", "Asia/Shanghai")
        let instant = schedule.fireInstant(on: ScheduleFixtures.date("2026-07-04"))
        #expect(instant.timeIntervalSince1970 == instant.timeIntervalSince1970.rounded())
        let shown = ScheduleFixtures.wallClock(instant, in: schedule.timeZone)
        #expect(shown.date == "2026-07-04")
        #expect(shown.time == "07:05")
        #expect(shown.second == 0)
    }

    @Test("nextFire and latestFire bracket every instant of a day, sampled every 7 minutes")
    func bracketing() {
        let start = ScheduleFixtures.instant("2026-05-09T12:00:00Z")
        for step in 0..<(2 * 24 * 60 / 7) {
            let now = start + TimeInterval(step * 7 * 60 + 13)
            let next = nine.nextFire(after: now)
            let latest = nine.latestFire(atOrBefore: now)
            #expect(latest.instant <= now && now < next.instant)
            #expect(next.date == latest.date.adding(days: 1))
            #expect(next.instant.timeIntervalSince(latest.instant) == 86_400)
        }
    }

    @Test("equal schedules compare equal")
    func equatable() {
        #expect(nine == ScheduleFixtures.schedule("09:00", "Asia/Shanghai"))
        #expect(nine != ScheduleFixtures.schedule("09:01", "Asia/Shanghai"))
        #expect(nine != ScheduleFixtures.schedule("09:00", "Asia/Tokyo"))
    }

    @Test("an out-of-range time of day is a programming error")
    func invalidTimeTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = DailySchedule(time: TimeOfDay(hour: 24, minute: 0), timeZone: TimeZone(identifier: "UTC")!)
        }
        await #expect(processExitsWith: .failure) {
            _ = DailySchedule(time: TimeOfDay(hour: 9, minute: 60), timeZone: TimeZone(identifier: "UTC")!)
        }
    }
}
