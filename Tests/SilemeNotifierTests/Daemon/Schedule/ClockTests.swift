import Foundation
import Testing
@testable import Values
@testable import Daemon
import Rule

/// `SystemClock`, the test `ManualClock`, and a simulated daemon loop driven by a clock.
@Suite("Clocks")
struct ClockTests {
    typealias F = ScheduleFixtures

    @Test("SystemClock reads the real wall clock")
    func systemClock() {
        let before = Date()
        let now = SystemClock().now()
        let after = Date()
        #expect(before <= now && now <= after)
    }

    @Test("ManualClock only moves when set or advanced")
    func manualClock() {
        let clock = ManualClock(F.instant("2026-05-10T00:00:00Z"))
        #expect(clock.now() == F.instant("2026-05-10T00:00:00Z"))
        clock.advance(by: 90)
        #expect(clock.now() == F.instant("2026-05-10T00:01:30Z"))
        clock.set(to: F.instant("2026-05-09T23:00:00Z"))
        #expect(clock.now() == F.instant("2026-05-09T23:00:00Z"))
        clock.advance(by: -60)
        #expect(clock.now() == F.instant("2026-05-09T22:59:00Z"))
    }

    @Test("ManualClock is safe to advance from many tasks at once")
    func manualClockConcurrency() async {
        let clock = ManualClock(Date(timeIntervalSince1970: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    for _ in 0..<100 { clock.advance(by: 1) }
                }
            }
        }
        #expect(clock.now() == Date(timeIntervalSince1970: 10_000))
    }

    @Test("catch-up decision at start-up uses latestFire with the clock's time")
    func catchUp() {
        let schedule = F.schedule("09:00", "Asia/Shanghai")
        let clock = ManualClock(F.instant("2026-05-10T02:00:00Z")) // 10:00 local
        let due = schedule.latestFire(atOrBefore: clock.now())
        #expect(due.date == schedule.runDate(at: clock.now()))      // today's run is due now
        clock.set(to: F.instant("2026-05-10T00:00:00Z"))            // 08:00 local
        let dueEarly = schedule.latestFire(atOrBefore: clock.now())
        #expect(dueEarly.date == schedule.runDate(at: clock.now()).adding(days: -1)) // yesterday's
    }

    @Test("a daemon loop driven by a manual clock runs once per date through both DST changes")
    func simulatedDaemon() {
        let schedule = F.schedule("01:30", "America/New_York")
        let clock = ManualClock(F.instant("2026-03-01T12:00:00Z"))
        var ran: [CalendarDate] = []
        while true {
            let fire = schedule.nextFire(after: clock.now())
            if fire.date > F.date("2026-11-09") { break }
            // Wake up a little late, as a real timer would, then run for the fire's date.
            clock.set(to: fire.instant + 0.25)
            #expect(schedule.latestFire(atOrBefore: clock.now()) == fire)
            ran.append(fire.date)
        }
        let first = F.date("2026-03-02")
        #expect(ran.first == first)
        #expect(ran == (0..<ran.count).map { first.adding(days: $0) })
        #expect(ran.last == F.date("2026-11-09"))
    }
}
