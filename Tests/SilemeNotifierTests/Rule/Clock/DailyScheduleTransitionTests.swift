import Foundation
import Testing
@testable import Rule

/// Configured times that a daylight-saving (or other offset) transition skips or repeats.
@Suite("DailySchedule across DST transitions")
struct DailyScheduleTransitionTests {
    typealias F = ScheduleFixtures

    // MARK: America/New_York, spring forward 2026-03-08 02:00 EST → 03:00 EDT

    @Test("02:30 on 2026-03-08 (in the gap) fires once, at the first instant after it: 03:00 EDT = 07:00Z")
    func springForwardGap() {
        let schedule = F.schedule("02:30", "America/New_York")
        let instant = schedule.fireInstant(on: F.date("2026-03-08"))
        #expect(instant == F.instant("2026-03-08T07:00:00Z"))
        let shown = F.wallClock(instant, in: schedule.timeZone)
        #expect(shown.date == "2026-03-08")
        #expect(shown.time == "03:00")
        // 23.5 h after the previous day's fire: the earliest moment 02:30 has passed on the 8th.
        #expect(instant.timeIntervalSince(schedule.fireInstant(on: F.date("2026-03-07"))) == 84_600)
    }

    @Test("the days around the gap fire at 02:30 local")
    func springForwardNeighbours() {
        let schedule = F.schedule("02:30", "America/New_York")
        #expect(schedule.fireInstant(on: F.date("2026-03-07")) == F.instant("2026-03-07T07:30:00Z"))
        #expect(schedule.fireInstant(on: F.date("2026-03-09")) == F.instant("2026-03-09T06:30:00Z"))
        for date in ["2026-03-07", "2026-03-09"] {
            let shown = F.wallClock(schedule.fireInstant(on: F.date(date)), in: schedule.timeZone)
            #expect(shown.date == date)
            #expect(shown.time == "02:30")
        }
    }

    @Test("walking 2026-03-06…03-10 at 02:30 gives exactly one fire per date, one on 03-08")
    func springForwardWalk() {
        let schedule = F.schedule("02:30", "America/New_York")
        let fires = F.walk(schedule, from: F.date("2026-03-06"), through: F.date("2026-03-10"))
        #expect(fires.map(\.date.description) == ["2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10"])
        #expect(zip(fires, fires.dropFirst()).allSatisfy { $0.instant < $1.instant })
        let onEighth = fires.filter { F.wallClock($0.instant, in: schedule.timeZone).date == "2026-03-08" }
        #expect(onEighth.count == 1)
        #expect(onEighth.first?.instant == F.instant("2026-03-08T07:00:00Z"))
    }

    @Test("other times in and at the edges of the gap", arguments: [
        ("01:59", "2026-03-08T06:59:00Z", "01:59"),
        ("02:00", "2026-03-08T07:00:00Z", "03:00"),
        ("02:01", "2026-03-08T07:00:00Z", "03:00"),
        ("02:59", "2026-03-08T07:00:00Z", "03:00"),
        ("03:00", "2026-03-08T07:00:00Z", "03:00"),
        ("03:30", "2026-03-08T07:30:00Z", "03:30"),
    ])
    func springForwardEdges(time: String, expected: String, shownTime: String) {
        let schedule = F.schedule(time, "America/New_York")
        let instant = schedule.fireInstant(on: F.date("2026-03-08"))
        #expect(instant == F.instant(expected))
        #expect(F.wallClock(instant, in: schedule.timeZone).time == shownTime)
        #expect(F.wallClock(instant, in: schedule.timeZone).date == "2026-03-08")
    }

    @Test("latestFire and nextFire around the gap fire")
    func springForwardLatestAndNext() {
        let schedule = F.schedule("02:30", "America/New_York")
        let gapFire = F.instant("2026-03-08T07:00:00Z")
        #expect(schedule.latestFire(atOrBefore: gapFire).date == F.date("2026-03-08"))
        #expect(schedule.latestFire(atOrBefore: gapFire - 1).date == F.date("2026-03-07"))
        // 01:59:59 EST, just before the gap: today's run is still ahead, at 03:00 EDT.
        #expect(schedule.nextFire(after: F.instant("2026-03-08T06:59:59Z")) == (F.date("2026-03-08"), gapFire))
        #expect(schedule.nextFire(after: gapFire).date == F.date("2026-03-09"))
    }

    // MARK: America/New_York, fall back 2026-11-01 02:00 EDT → 01:00 EST

    @Test("01:30 on 2026-11-01 (occurs twice) fires once, at the first occurrence 05:30Z")
    func fallBackOverlap() {
        let schedule = F.schedule("01:30", "America/New_York")
        let instant = schedule.fireInstant(on: F.date("2026-11-01"))
        #expect(instant == F.instant("2026-11-01T05:30:00Z"))
        #expect(F.wallClock(instant, in: schedule.timeZone).time == "01:30")
        #expect(schedule.timeZone.secondsFromGMT(for: instant) == -4 * 3_600)
        // The second 01:30 (EST, 06:30Z) is not a fire: the next one is the next day's.
        let next = schedule.nextFire(after: instant)
        #expect(next.date == F.date("2026-11-02"))
        #expect(next.instant == F.instant("2026-11-02T06:30:00Z"))
        // Between and at the repeated 01:30 the latest fire is still the first occurrence.
        for now in [F.instant("2026-11-01T06:00:00Z"), F.instant("2026-11-01T06:30:00Z"), F.instant("2026-11-01T07:00:00Z")] {
            #expect(schedule.latestFire(atOrBefore: now) == (F.date("2026-11-01"), instant))
        }
    }

    @Test("walking 2026-10-30…11-04 at 01:30 gives one fire per date: none skipped or doubled")
    func fallBackWalk() {
        let schedule = F.schedule("01:30", "America/New_York")
        let fires = F.walk(schedule, from: F.date("2026-10-30"), through: F.date("2026-11-04"))
        #expect(fires.map(\.date.description)
            == ["2026-10-30", "2026-10-31", "2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"])
        #expect(fires.map(\.instant) == [
            F.instant("2026-10-30T05:30:00Z"), F.instant("2026-10-31T05:30:00Z"), F.instant("2026-11-01T05:30:00Z"),
            F.instant("2026-11-02T06:30:00Z"), F.instant("2026-11-03T06:30:00Z"), F.instant("2026-11-04T06:30:00Z"),
        ])
        for fire in fires {
            #expect(F.wallClock(fire.instant, in: schedule.timeZone) == (fire.date.description, "01:30", 0))
        }
    }

    @Test("times in and at the edges of the repeated hour take the first occurrence", arguments: [
        ("00:59", "2026-11-01T04:59:00Z"),
        ("01:00", "2026-11-01T05:00:00Z"),
        ("01:59", "2026-11-01T05:59:00Z"),
        ("02:00", "2026-11-01T07:00:00Z"),
    ])
    func fallBackEdges(time: String, expected: String) {
        let schedule = F.schedule(time, "America/New_York")
        let instant = schedule.fireInstant(on: F.date("2026-11-01"))
        #expect(instant == F.instant(expected))
        #expect(F.wallClock(instant, in: schedule.timeZone) == ("2026-11-01", time, 0))
    }

    // MARK: Other zones

    @Test("Europe/London: 01:30 is skipped on 2026-03-29 and repeated on 2026-10-25")
    func london() {
        let schedule = F.schedule("01:30", "Europe/London")
        let gap = schedule.fireInstant(on: F.date("2026-03-29"))
        #expect(gap == F.instant("2026-03-29T01:00:00Z"))
        #expect(F.wallClock(gap, in: schedule.timeZone).time == "02:00")
        let overlap = schedule.fireInstant(on: F.date("2026-10-25"))
        #expect(overlap == F.instant("2026-10-25T00:30:00Z"))
        #expect(F.wallClock(overlap, in: schedule.timeZone).time == "01:30")
    }

    @Test("Australia/Lord_Howe (30-minute DST): gap 02:00–02:30 and repeated 01:30–02:00")
    func lordHowe() {
        // 2026-10-04 02:00 +10:30 → 02:30 +11: 02:15 fires at the first instant after the gap, 02:30.
        let inGap = F.schedule("02:15", "Australia/Lord_Howe")
        let gapInstant = inGap.fireInstant(on: F.date("2026-10-04"))
        #expect(gapInstant == F.instant("2026-10-03T15:30:00Z"))
        #expect(F.wallClock(gapInstant, in: inGap.timeZone) == ("2026-10-04", "02:30", 0))
        let firstAfterGap = F.schedule("02:30", "Australia/Lord_Howe").fireInstant(on: F.date("2026-10-04"))
        #expect(firstAfterGap == F.instant("2026-10-03T15:30:00Z"))
        // 2026-04-05 02:00 +11 → 01:30 +10:30: 01:45 happens twice; the first is at +11.
        let repeated = F.schedule("01:45", "Australia/Lord_Howe")
        let overlapInstant = repeated.fireInstant(on: F.date("2026-04-05"))
        #expect(overlapInstant == F.instant("2026-04-04T14:45:00Z"))
        #expect(repeated.nextFire(after: overlapInstant).instant == F.instant("2026-04-05T15:15:00Z"))
    }

    @Test("America/Santiago: transitions at local midnight")
    func santiago() {
        // 2026-09-06 00:00 -04 → 01:00 -03: 00:30 does not exist; it fires at 01:00 the same date.
        let halfPast = F.schedule("00:30", "America/Santiago")
        let gap = halfPast.fireInstant(on: F.date("2026-09-06"))
        #expect(gap == F.instant("2026-09-06T04:00:00Z"))
        #expect(F.wallClock(gap, in: halfPast.timeZone) == ("2026-09-06", "01:00", 0))
        let midnight = F.schedule("00:00", "America/Santiago").fireInstant(on: F.date("2026-09-06"))
        #expect(F.wallClock(midnight, in: halfPast.timeZone) == ("2026-09-06", "01:00", 0))
        // 2026-04-05 00:00 -03 → 2026-04-04 23:00 -04: 23:30 on 04-04 happens twice.
        let late = F.schedule("23:30", "America/Santiago")
        let overlap = late.fireInstant(on: F.date("2026-04-04"))
        #expect(overlap == F.instant("2026-04-05T02:30:00Z"))
        let next = late.nextFire(after: overlap)
        #expect(next.date == F.date("2026-04-05"))
        #expect(next.instant == F.instant("2026-04-06T03:30:00Z"))
    }

    @Test("a gap that ends at midnight: the run for the date happens at the first instant after it")
    func gapEndingAtMidnight() {
        // Asia/Pyongyang 2018-05-04 23:30 +08:30 → 2018-05-05 00:00 +09: 23:45 on 05-04 fires at
        // the first instant after the gap, which the clocks show as 00:00 on 05-05.
        let schedule = F.schedule("23:45", "Asia/Pyongyang")
        let fires = F.walk(schedule, from: F.date("2018-05-02"), through: F.date("2018-05-07"))
        #expect(fires.map(\.date.description)
            == ["2018-05-02", "2018-05-03", "2018-05-04", "2018-05-05", "2018-05-06", "2018-05-07"])
        #expect(zip(fires, fires.dropFirst()).allSatisfy { $0.instant < $1.instant })
        #expect(fires[2].instant == F.instant("2018-05-04T15:00:00Z"))
        #expect(F.wallClock(fires[2].instant, in: schedule.timeZone) == ("2018-05-05", "00:00", 0))
        #expect(fires[3].instant == F.instant("2018-05-05T14:45:00Z"))
        // A time just before the gap is unaffected.
        let before = F.schedule("23:15", "Asia/Pyongyang").fireInstant(on: F.date("2018-05-04"))
        #expect(before == F.instant("2018-05-04T14:45:00Z"))
    }

    @Test("a calendar date the zone skipped entirely gets no fire; its neighbours fire normally",
          arguments: [
            // Samoa moved across the date line: 2011-12-29 24:00 -10 became 2011-12-31 00:00 +14.
            ("Pacific/Apia", "2011-12-30", "2011-12-30T10:00:00Z"),
            // Kwajalein: 1993-08-20 24:00 -12 became 1993-08-22 00:00 +12.
            ("Pacific/Kwajalein", "1993-08-21", "1993-08-21T12:00:00Z"),
            // Kiritimati: 1994-12-30 24:00 -10 became 1995-01-01 00:00 +14.
            ("Pacific/Kiritimati", "1994-12-31", "1994-12-31T10:00:00Z"),
          ])
    func skippedDate(zone: String, skipped: String, transition: String) {
        let skippedDate = F.date(skipped)
        let transitionInstant = F.instant(transition)
        for time in ["00:00", "00:30", "09:00", "23:59"] {
            let schedule = F.schedule(time, zone)
            // Nobody's wall clock showed the skipped date.
            #expect(schedule.runDate(at: transitionInstant - 1) == skippedDate.adding(days: -1))
            #expect(schedule.runDate(at: transitionInstant) == skippedDate.adding(days: 1))
            // Asked anyway, the answer is the first instant after the gap.
            #expect(schedule.fireInstant(on: skippedDate) == transitionInstant)

            let fires = F.walk(schedule, from: skippedDate.adding(days: -3), through: skippedDate.adding(days: 3))
            #expect(fires.map(\.date) == [-3, -2, -1, 1, 2, 3].map { skippedDate.adding(days: $0) }, "\(zone) \(time)")
            #expect(zip(fires, fires.dropFirst()).allSatisfy { $0.instant < $1.instant })
            for fire in fires {
                #expect(F.wallClock(fire.instant, in: schedule.timeZone) == (fire.date.description, time, 0),
                        "\(zone) \(time) \(fire.date.description)")
            }
            // latestFire never names the skipped date either.
            for now in [transitionInstant - 1, transitionInstant, transitionInstant + 3_600] {
                #expect(schedule.latestFire(atOrBefore: now).date != skippedDate)
            }
        }
    }
}
