import Foundation
import Testing
@testable import Values
@testable import Store
@testable import Daemon
import Rule

/// The daemon's next-action decision, pure: the clock, the slots (here first only the
/// service's, 09:00 Asia/Shanghai = 01:00 UTC), what the database says about the run dates the
/// users are on, and the failure back-off.
@Suite("Daemon next action")
struct NextActionTests {
    typealias F = ScheduleFixtures
    static let service = F.schedule("09:00", "Asia/Shanghai")
    static let everyone = NotifySlots(keys: [], service: service)
    static let fire = F.instant("2026-01-13T01:00:00Z")
    static let day = F.date("2026-01-13")
    static let nextFire = F.instant("2026-01-14T01:00:00Z")
    static let fresh = DaemonState(completed: [:])
    static let done = DaemonState(completed: [day: .all])

    static func decide(_ now: String, _ state: DaemonState, slots: NotifySlots = everyone, notBefore: Date = .distantPast) -> NextAction {
        NextAction.decide(now: F.instant(now), slots: slots, state: state, notBefore: notBefore)
    }

    static func run(_ now: String, _ reason: NextAction.Reason, slots: Set<String>? = nil) -> NextAction {
        .run(at: F.instant(now), slots: slots, reason: reason)
    }

    @Test("at the fire time a run that has not happened is scheduled; later it is a catch-up")
    func scheduledAndCatchUp() {
        #expect(Self.decide("2026-01-13T01:00:00Z", Self.fresh) == Self.run("2026-01-13T01:00:00Z", "scheduled"))
        #expect(Self.decide("2026-01-13T01:00:59Z", Self.fresh) == Self.run("2026-01-13T01:00:59Z", "scheduled"))
        #expect(Self.decide("2026-01-13T01:01:01Z", Self.fresh) == Self.run("2026-01-13T01:01:01Z", "catch-up"))
        // Down over the fire time and back the next morning before 09:00: yesterday's run, at once.
        #expect(Self.decide("2026-01-13T20:00:00Z", Self.fresh) == Self.run("2026-01-13T20:00:00Z", "catch-up"))
        #expect(NextAction.dates(now: F.instant("2026-01-13T20:00:00Z"), slots: Self.everyone) == [Self.day])
    }

    @Test("a run that started and did not complete is run again")
    func unfinished() {
        #expect(Self.decide("2026-01-13T03:00:00Z", DaemonState(completed: [:], started: [Self.day: .all]))
                == Self.run("2026-01-13T03:00:00Z", "retrying an unfinished run"))
    }

    @Test("after a completed run: wait for the next fire, or for a retry of failed mails the same day")
    func afterCompleted() {
        #expect(Self.decide("2026-01-13T02:00:00Z", Self.done) == .waitForNextRun(until: Self.nextFire))
        let retryAt = F.instant("2026-01-13T02:05:00Z")
        let waiting = DaemonState(completed: [Self.day: .all], nextRetry: retryAt)
        #expect(Self.decide("2026-01-13T02:00:00Z", waiting) == .waitForRetry(until: retryAt))
        #expect(Self.decide("2026-01-13T02:05:00Z", waiting) == Self.run("2026-01-13T02:05:00Z", "retry"))
    }

    @Test("retries go on past the zone's midnight, until the next fire takes over")
    func retriesOutliveTheDay() {
        // 16:00 UTC is midnight in Shanghai: 01-14 there, the latest fire is still 01-13's, and its
        // failed mails are retried all the same (a contact would otherwise wait until the next fire).
        let due = DaemonState(completed: [Self.day: .all], nextRetry: F.instant("2026-01-13T15:00:00Z"))
        #expect(Self.decide("2026-01-13T16:30:00Z", due) == Self.run("2026-01-13T16:30:00Z", "retry"))
        let later = DaemonState(completed: [Self.day: .all], nextRetry: F.instant("2026-01-13T17:00:00Z"))
        #expect(Self.decide("2026-01-13T16:30:00Z", later) == .waitForRetry(until: F.instant("2026-01-13T17:00:00Z")))
        // A retry time after the next fire: the next fire comes first (its run takes the user over).
        let past = DaemonState(completed: [Self.day: .all], nextRetry: Self.nextFire.addingTimeInterval(60))
        #expect(Self.decide("2026-01-13T16:30:00Z", past) == .waitForNextRun(until: Self.nextFire))
    }

    @Test("held alerts: wait for the hold's end, then a run of everyone; whichever of a retry and a hold's end comes first")
    func holdEnds() {
        let end = F.instant("2026-01-13T07:00:00Z")
        let held = DaemonState(completed: [Self.day: .all], nextRelease: end)
        #expect(Self.decide("2026-01-13T02:00:00Z", held) == .waitForHoldEnd(until: end))
        #expect(Self.decide("2026-01-13T07:00:00Z", held) == Self.run("2026-01-13T07:00:00Z", .holdEnds))
        // A hold that ends after the next fire: the next fire's run comes first (it ends nothing yet).
        let long = DaemonState(completed: [Self.day: .all], nextRelease: Self.nextFire.addingTimeInterval(3600))
        #expect(Self.decide("2026-01-13T02:00:00Z", long) == .waitForNextRun(until: Self.nextFire))
        // Both a retry and a hold's end waiting: the earlier one.
        let retryAt = F.instant("2026-01-13T03:00:00Z")
        let both = DaemonState(completed: [Self.day: .all], nextRetry: retryAt, nextRelease: end)
        #expect(Self.decide("2026-01-13T02:00:00Z", both) == .waitForRetry(until: retryAt))
        #expect(Self.decide("2026-01-13T05:00:00Z", both) == Self.run("2026-01-13T05:00:00Z", "retry"))
        let holdFirst = DaemonState(completed: [Self.day: .all], nextRetry: F.instant("2026-01-13T08:00:00Z"), nextRelease: end)
        #expect(Self.decide("2026-01-13T02:00:00Z", holdFirst) == .waitForHoldEnd(until: end))
        // A run the instant's users still wait for comes before either.
        #expect(Self.decide("2026-01-13T07:30:00Z", DaemonState(completed: [:], nextRelease: end))
                == Self.run("2026-01-13T07:30:00Z", "catch-up"))
    }

    @Test("a failed run backs off: wait until the back-off ends, never past the next fire")
    func backOff() {
        let notBefore = F.instant("2026-01-13T01:30:00Z")
        #expect(Self.decide("2026-01-13T01:10:00Z", Self.fresh, notBefore: notBefore) == .waitAfterFailure(until: notBefore))
        let late = F.instant("2026-01-14T05:00:00Z")
        #expect(Self.decide("2026-01-13T23:00:00Z", Self.fresh, notBefore: late) == .waitAfterFailure(until: Self.nextFire))
        #expect(Self.decide("2026-01-13T01:30:00Z", Self.fresh, notBefore: notBefore) == Self.run("2026-01-13T01:30:00Z", "catch-up"))
    }

    // MARK: Many slots

    /// The service's users, Los Angeles at the default 09:00, and a Shanghai user at 20:00.
    static let mixed = NotifySlots(keys: ["|", "America/Los_Angeles|", "Asia/Shanghai|20:00:00"], service: service)

    @Test("each slot is served at its own instant: the one whose instant came, not the others")
    func ownInstants() {
        // 09:00 Shanghai on the 13th: the service's users are on the 13th; Los Angeles is still on
        // the 12th (17:00 there), whose run at 09:00 LA (01:00 Shanghai) served it; 20:00 Shanghai
        // is on the 12th, served at 12:00Z on the 12th.
        let dates = NextAction.dates(now: Self.fire, slots: Self.mixed)
        #expect(dates == [F.date("2026-01-12"), Self.day])
        let servedBefore = DaemonState(completed: [F.date("2026-01-12"): .only(["America/Los_Angeles|", "Asia/Shanghai|20:00:00"])])
        #expect(Self.decide("2026-01-13T01:00:00Z", servedBefore, slots: Self.mixed) == Self.run("2026-01-13T01:00:00Z", "scheduled", slots: ["|"]))
        // Once it is served, the next instant is 20:00 Shanghai (12:00Z), then 09:00 LA (17:00Z).
        var state = DaemonState(completed: [F.date("2026-01-12"): .only(["America/Los_Angeles|", "Asia/Shanghai|20:00:00"]),
                                            Self.day: .only(["|"])])
        #expect(Self.decide("2026-01-13T01:00:30Z", state, slots: Self.mixed) == .waitForNextRun(until: F.instant("2026-01-13T12:00:00Z")))
        state = DaemonState(completed: [F.date("2026-01-12"): .only(["America/Los_Angeles|"]), Self.day: .only(["|", "Asia/Shanghai|20:00:00"])])
        #expect(Self.decide("2026-01-13T12:00:30Z", state, slots: Self.mixed) == .waitForNextRun(until: F.instant("2026-01-13T17:00:00Z")))
        #expect(Self.decide("2026-01-13T17:00:00Z", state, slots: Self.mixed)
                == Self.run("2026-01-13T17:00:00Z", "scheduled", slots: ["America/Los_Angeles|"]))
    }

    @Test("after downtime over several instants, every slot not served is run at once; a run of everyone covers all")
    func downtimeOverSeveralInstants() {
        // Down from 00:00Z to 18:00Z on the 13th: 09:00 Shanghai, 20:00 Shanghai and 09:00 LA all passed.
        let state = DaemonState(completed: [F.date("2026-01-12"): .all])
        #expect(Self.decide("2026-01-13T18:00:00Z", state, slots: Self.mixed) == Self.run("2026-01-13T18:00:00Z", "catch-up"))
        let served = DaemonState(completed: [Self.day: .all])
        #expect(Self.decide("2026-01-13T18:00:00Z", served, slots: Self.mixed) == .waitForNextRun(until: Self.nextFire))
    }

    @Test("a user who moves to a slot whose instant has passed today is served at once")
    func newSlotAfterItsInstant() {
        let moved = NotifySlots(keys: ["|", "Asia/Shanghai|07:00:00"], service: Self.service)
        #expect(Self.decide("2026-01-13T02:00:00Z", Self.done, slots: moved) == .waitForNextRun(until: F.instant("2026-01-13T23:00:00Z")),
                "a run of everyone on the 13th served the new slot too")
        let onlyService = DaemonState(completed: [Self.day: .only(["|"])])
        #expect(Self.decide("2026-01-13T02:00:00Z", onlyService, slots: moved)
                == Self.run("2026-01-13T02:00:00Z", "catch-up", slots: ["Asia/Shanghai|07:00:00"]))
    }
}
