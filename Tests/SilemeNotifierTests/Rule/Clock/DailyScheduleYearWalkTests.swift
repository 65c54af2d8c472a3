import Foundation
import Testing
@testable import Values
@testable import Rule

/// Walks `nextFire(after:)` through whole years in zones with and without DST and checks that
/// every calendar date fires exactly once, in order, at the instant the rules prescribe
/// (cross-checked against a brute-force scan) and consistently with `latestFire`/`fireInstant`.
@Suite("DailySchedule whole-year walks")
struct DailyScheduleYearWalkTests {
    typealias F = ScheduleFixtures

    /// The brief's times plus the edges of the usual 01:00/02:00 transitions and of midnight.
    static let times = ["00:00", "00:30", "01:00", "01:30", "02:00", "02:15", "02:30", "09:00", "23:30", "23:59"]

    @Test("one fire per date, strictly increasing, at the prescribed instant", arguments: [
        "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Shanghai",
        "America/Santiago", "America/Havana", "Pacific/Kiritimati", "Pacific/Pago_Pago",
    ])
    func walkYears(zone: String) {
        for year in [2026, 2027, 2028] {
            let first = CalendarDate(year: year, month: 1, day: 1)!
            let last = CalendarDate(year: year, month: 12, day: 31)!
            let expectedCount = year == 2028 ? 366 : 365
            for time in Self.times {
                let schedule = F.schedule(time, zone)
                let fires = F.walk(schedule, from: first, through: last)
                #expect(fires.count == expectedCount, "\(zone) \(time) \(year)")
                #expect(fires.first?.date == first && fires.last?.date == last, "\(zone) \(time) \(year)")
                var shownOtherTime = 0
                for (index, fire) in fires.enumerated() {
                    #expect(fire.date == first.adding(days: index), "\(zone) \(time): skipped or doubled date")
                    #expect(fire.instant == schedule.fireInstant(on: fire.date))
                    #expect(fire.instant == F.bruteForceFire(schedule, on: fire.date),
                            "\(zone) \(time) \(fire.date.description)")
                    #expect(schedule.latestFire(atOrBefore: fire.instant) == fire)
                    if index > 0 {
                        let previous = fires[index - 1]
                        #expect(previous.instant < fire.instant)
                        #expect(schedule.latestFire(atOrBefore: fire.instant - 0.001) == previous)
                        #expect(schedule.nextFire(after: fire.instant - 0.001) == fire)
                    }
                    let shown = F.wallClock(fire.instant, in: schedule.timeZone)
                    // Independent cross-check: Foundation resolves a repeated time to its first
                    // occurrence too; a skipped one it shifts by the gap's length, past the
                    // transition at which this schedule fires.
                    if shown.time == time {
                        #expect(fire.instant == calendarResolution(schedule, fire.date),
                                "\(zone) \(time) \(fire.date.description)")
                    } else {
                        let zone = schedule.timeZone
                        #expect(zone.secondsFromGMT(for: fire.instant - 1) < zone.secondsFromGMT(for: fire.instant),
                                "\(zone) \(time) \(fire.date.description): a skipped time fires at the transition")
                        #expect(calendarResolution(schedule, fire.date).map { fire.instant <= $0 } ?? true)
                    }
                    #expect(shown.date == fire.date.description, "\(zone) \(time) \(fire.date.description)")
                    if shown.time != time { shownOtherTime += 1 }
                }
                // Only a gap day shows another wall time, and a year has at most one of those.
                #expect(shownOtherTime <= 1, "\(zone) \(time) \(year)")
            }
        }
    }

    /// `Calendar.date(from:)` for the schedule's wall time on `date`.
    private func calendarResolution(_ schedule: DailySchedule, _ date: CalendarDate) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = schedule.timeZone
        let (year, month, day) = date.components
        return calendar.date(from: DateComponents(year: year, month: month, day: day,
                                                  hour: schedule.time.hour, minute: schedule.time.minute))
    }

    @Test("the zones have the transitions the walks are meant to exercise")
    func fixturesHaveTransitions() {
        func offsets(_ zone: String, _ instants: [String]) -> [Int] {
            instants.map { F.zone(zone).secondsFromGMT(for: F.instant($0)) / 60 }
        }
        #expect(offsets("America/New_York", ["2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z"]) == [-300, -240])
        #expect(offsets("Europe/London", ["2027-10-31T00:59:59Z", "2027-10-31T01:00:00Z"]) == [60, 0])
        #expect(offsets("Australia/Lord_Howe", ["2027-10-02T15:29:59Z", "2027-10-02T15:30:00Z"]) == [630, 660])
        #expect(offsets("America/Havana", ["2026-03-08T04:59:59Z", "2026-03-08T05:00:00Z"]) == [-300, -240])
        #expect(offsets("Asia/Shanghai", ["2026-01-01T00:00:00Z", "2026-07-01T00:00:00Z"]) == [480, 480])
    }

    @Test("a gap day is the one day showing another wall time (New York, 02:30, 2026)")
    func gapDayIsTheOddOneOut() {
        let schedule = F.schedule("02:30", "America/New_York")
        let fires = F.walk(schedule, from: F.date("2026-01-01"), through: F.date("2026-12-31"))
        let odd = fires.filter { F.wallClock($0.instant, in: schedule.timeZone).time != "02:30" }
        #expect(odd.map(\.date) == [F.date("2026-03-08")])
    }
}
