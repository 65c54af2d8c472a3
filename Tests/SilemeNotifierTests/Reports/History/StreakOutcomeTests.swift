import Foundation
import Testing
@testable import Values
@testable import Reports
@testable import Rule

/// The per-user report's verdict on a streak, against docs/rule.md's table.
@Suite("Streak outcome")
struct StreakOutcomeTests {
    static func outcome(next: String?, notified: Bool = false, rows: Int = 0, end: String = "2026-01-31") -> StreakOutcome {
        Streak.outcome(lastCheckIn: CalendarDate(parsing: "2026-01-10")!, nextCheckIn: next.flatMap { CalendarDate(parsing: $0) },
                       reportEnd: CalendarDate(parsing: end)!, notified: notified, rows: rows, rule: MissRule(thresholdDays: 2, catchUpDays: 7))
    }

    @Test("docs/rule.md's table with L = 2026-01-10: a check-in on 01-13 (the due day) leaves nothing due")
    func table() {
        #expect(Self.outcome(next: "2026-01-11") == .notDue)   // m never above 0
        #expect(Self.outcome(next: "2026-01-12") == .notDue)
        #expect(Self.outcome(next: "2026-01-13") == .notDue)   // checked in on D = 01-13 (before the run)
        #expect(Self.outcome(next: "2026-01-14") == .noRecord) // the run on 01-13 saw m = 2
        #expect(Self.outcome(next: "2026-01-14", notified: true, rows: 1) == .notified)
        #expect(Self.outcome(next: "2026-01-14", rows: 2) == .notSent)
    }

    @Test("a streak that still lasts is judged up to the report's last day")
    func open() {
        #expect(Self.outcome(next: nil, end: "2026-01-12") == .notDue)
        #expect(Self.outcome(next: nil, end: "2026-01-13") == .noRecord)
    }
}
