import Testing
@testable import Delivery
@testable import Rule
@testable import Values

/// What each run of an instant plans (docs/user-time.md): every message once per instant, and the
/// sweeps of the messages that come at once left to the daemon's all-clear pass when the run is
/// of some slots only.
@Suite("RunPlan.Scope of an instant's run dates")
struct RunScopeTests {
    typealias F = ScheduleFixtures
    static let service = F.schedule("09:00", "Asia/Shanghai")
    /// At 01:00Z on the 13th: Kolkata at 06:00 and the service's users on the 13th, Los Angeles on the 12th.
    static let dates = NotifySlots(keys: ["|", "America/Los_Angeles|", "Asia/Kolkata|06:00:00"], service: service)
        .runDates(at: F.instant("2026-01-13T01:00:00Z"))
    static let once: Set<DeliveryJob.Kind> = [.introduction, .allClear, .acknowledged, .undeliverable, .escalation, .unheard,
                                                   .outcomeOK, .outcomeUnreachable]
    /// What answers an event at once: the daemon's all-clear pass sends it.
    static let answers: Set<DeliveryJob.Kind> = [.allClear, .acknowledged, .undeliverable, .escalation, .unheard,
                                                      .outcomeOK, .outcomeUnreachable]

    @Test("a run of everyone: the first run date plans every kind, the others only what comes at the user's time")
    func everyone() {
        let first = RunPlan.Scope.runDate(Self.dates[0], first: true)
        let second = RunPlan.Scope.runDate(Self.dates[1], first: false)
        #expect(first.kinds == RunPlan.Scope.day.kinds)
        #expect(second.kinds == RunPlan.Scope.day.kinds.subtracting(Self.once))
        #expect(second.kinds.contains(.alert) && second.kinds.contains(.followUp) && second.kinds.contains(.reminder))
        #expect(first.slots == ["Asia/Kolkata|06:00:00", "|"] && second.slots == ["America/Los_Angeles|"])
    }

    @Test("a run of some times: introductions still once, all-clears, acknowledged notices and undeliverable events to the all-clear pass")
    func some() {
        let first = RunPlan.Scope.runDate(Self.dates[0], first: true, everyone: false)
        let second = RunPlan.Scope.runDate(Self.dates[1], first: false, everyone: false)
        #expect(first.kinds == RunPlan.Scope.day.kinds.subtracting(Self.answers))
        #expect(first.kinds.contains(.introduction) && first.kinds.contains(.alert))
        #expect(second.kinds == RunPlan.Scope.day.kinds.subtracting(Self.once))
        // The pass the daemon's watcher runs plans exactly what these runs leave out.
        #expect(RunPlan.Scope.allClears().kinds == Self.answers)
    }
}
