import Testing
@testable import Values
@testable import Reports
@testable import Rule

/// The per-user report's verdict on a streak the guards of docs/guards.md decided.
@Suite("Streak outcome with the guards")
struct GuardStreakTests {
    static func outcome(next: String?, rows: Int = 0, superseded: Bool = false, paused: String? = nil,
                        end: String = "2026-01-31") -> StreakOutcome {
        Streak.outcome(lastCheckIn: CalendarDate(parsing: "2026-01-10")!, nextCheckIn: next.flatMap { CalendarDate(parsing: $0) },
                       reportEnd: CalendarDate(parsing: end)!, notified: false, rows: rows,
                       rule: MissRule(thresholdDays: 2, catchUpDays: 7), superseded: superseded,
                       pausedUntil: paused.flatMap { CalendarDate(parsing: $0) })
    }

    @Test("a superseded skip as the streak's latest row: superseded")
    func superseded() {
        #expect(Self.outcome(next: nil, rows: 3, superseded: true) == .superseded)
    }

    @Test("a pause through the due days, or one that kept m below the threshold: paused; one that ended long before: no record")
    func paused() {
        #expect(Self.outcome(next: "2026-01-16", paused: "2026-01-20") == .paused)      // away through 01-15
        #expect(Self.outcome(next: "2026-01-16", paused: "2026-01-14") == .paused)      // m from 01-14 on 01-15: 0
        #expect(Self.outcome(next: "2026-01-20", paused: "2026-01-14") == .noRecord)    // m from 01-14 on 01-19: 4
        #expect(Self.outcome(next: "2026-01-16", paused: "2026-01-05") == .noRecord)
        #expect(Self.outcome(next: "2026-01-12", paused: "2026-01-20") == .notDue)      // never reached the threshold
    }
}
