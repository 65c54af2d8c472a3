import Foundation
import Testing
@testable import Values
@testable import Store
@testable import Daemon
import Rule

/// The daemon's next-action decision, pure: the clock, the schedule (09:00 Asia/Shanghai, i.e.
/// 01:00 UTC), what the database says about the latest fire's date, and the failure back-off.
@Suite("Daemon next action")
struct NextActionTests {
    static let schedule = ScheduleFixtures.schedule("09:00", "Asia/Shanghai")
    static let fire = ScheduleFixtures.instant("2026-01-13T01:00:00Z")
    static let day = ScheduleFixtures.date("2026-01-13")
    static let nextFire = ScheduleFixtures.instant("2026-01-14T01:00:00Z")
    static let fresh = DaemonState(completed: false, started: false)
    static let done = DaemonState(completed: true, started: true)

    static func decide(_ now: String, _ state: DaemonState, notBefore: Date = .distantPast) -> NextAction {
        NextAction.decide(now: ScheduleFixtures.instant(now), schedule: schedule, state: state, notBefore: notBefore)
    }

    @Test("at the fire time a run that has not happened is scheduled; later it is a catch-up")
    func scheduledAndCatchUp() {
        #expect(Self.decide("2026-01-13T01:00:00Z", Self.fresh) == .run(Self.day, reason: "scheduled"))
        #expect(Self.decide("2026-01-13T01:00:59Z", Self.fresh) == .run(Self.day, reason: "scheduled"))
        #expect(Self.decide("2026-01-13T01:01:01Z", Self.fresh) == .run(Self.day, reason: "catch-up"))
        // Down over the fire time and back the next morning before 09:00: yesterday's run.
        #expect(Self.decide("2026-01-13T20:00:00Z", Self.fresh) == .run(Self.day, reason: "catch-up"))
    }

    @Test("a run that started and did not complete is run again")
    func unfinished() {
        #expect(Self.decide("2026-01-13T03:00:00Z", DaemonState(completed: false, started: true))
                == .run(Self.day, reason: "retrying an unfinished run"))
    }

    @Test("after a completed run: wait for the next fire, or for a retry of failed mails the same day")
    func afterCompleted() {
        #expect(Self.decide("2026-01-13T02:00:00Z", Self.done) == .waitForNextRun(until: Self.nextFire))
        let retryAt = ScheduleFixtures.instant("2026-01-13T02:05:00Z")
        let waiting = DaemonState(completed: true, started: true, nextRetry: retryAt)
        #expect(Self.decide("2026-01-13T02:00:00Z", waiting) == .waitForRetry(until: retryAt))
        #expect(Self.decide("2026-01-13T02:05:00Z", waiting) == .run(Self.day, reason: "retry"))
    }

    @Test("retries go on past the zone's midnight, until the next fire takes over")
    func retriesOutliveTheDay() {
        // 16:00 UTC is midnight in Shanghai: 01-14 there, the latest fire is still 01-13's, and its
        // failed mails are retried all the same (a contact would otherwise wait until the next fire).
        let due = DaemonState(completed: true, started: true, nextRetry: ScheduleFixtures.instant("2026-01-13T15:00:00Z"))
        #expect(Self.decide("2026-01-13T16:30:00Z", due) == .run(Self.day, reason: "retry"))
        let later = DaemonState(completed: true, started: true, nextRetry: ScheduleFixtures.instant("2026-01-13T17:00:00Z"))
        #expect(Self.decide("2026-01-13T16:30:00Z", later) == .waitForRetry(until: ScheduleFixtures.instant("2026-01-13T17:00:00Z")))
        // A retry time after the next fire: the next fire comes first (its run takes the user over).
        let past = DaemonState(completed: true, started: true, nextRetry: Self.nextFire.addingTimeInterval(60))
        #expect(Self.decide("2026-01-13T16:30:00Z", past) == .waitForNextRun(until: Self.nextFire))
    }

    @Test("a failed run backs off: wait until the back-off ends, never past the next fire")
    func backOff() {
        let notBefore = ScheduleFixtures.instant("2026-01-13T01:30:00Z")
        #expect(Self.decide("2026-01-13T01:10:00Z", Self.fresh, notBefore: notBefore) == .waitAfterFailure(until: notBefore))
        let late = ScheduleFixtures.instant("2026-01-14T05:00:00Z")
        #expect(Self.decide("2026-01-13T23:00:00Z", Self.fresh, notBefore: late) == .waitAfterFailure(until: Self.nextFire))
        #expect(Self.decide("2026-01-13T01:30:00Z", Self.fresh, notBefore: notBefore) == .run(Self.day, reason: "catch-up"))
    }
}
