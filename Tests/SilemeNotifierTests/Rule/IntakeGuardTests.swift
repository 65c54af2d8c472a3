import Foundation
import Testing
@testable import Rule
@testable import Values

/// The intake guard's pure decisions (docs/intake-hold.md): which days are gaps, and whether an
/// alert is held.
@Suite("Intake guard")
struct IntakeGuardTests {
    static func day(_ text: String) -> CalendarDate { CalendarDate(parsing: text)! }

    /// `users` check-ins on every day of the 30 before 2026-01-13, with `changes` laid over it.
    static func intake(_ users: Int, _ changes: [String: Int] = [:]) -> [CalendarDate: Int] {
        var intake: [CalendarDate: Int] = [:]
        for offset in 1...30 { intake[day("2026-01-13").adding(days: -offset)] = users }
        for (text, count) in changes { intake[day(text)] = count }
        return intake
    }

    static let days = day("2026-01-05")...day("2026-01-12")

    @Test("the design doc's outage: two days with no check-in among 200 daily users are gaps; the days around them are not")
    func outage() {
        let gaps = IntakeGuard().gaps(in: Self.days, intake: Self.intake(200, ["2026-01-11": 0, "2026-01-12": 0]))
        #expect(gaps == [Self.day("2026-01-11"), Self.day("2026-01-12")])
    }

    @Test("a day just below half the median is a gap, at half it is not; a weekend 30% down is ordinary variation")
    func threshold() {
        let guardian = IntakeGuard()
        #expect(guardian.gaps(in: Self.days, intake: Self.intake(200, ["2026-01-10": 99])) == [Self.day("2026-01-10")])
        #expect(guardian.gaps(in: Self.days, intake: Self.intake(200, ["2026-01-10": 100])).isEmpty)
        #expect(guardian.gaps(in: Self.days, intake: Self.intake(200, ["2026-01-10": 140, "2026-01-11": 140])).isEmpty)
    }

    @Test("a small service (median below INTAKE_MIN_USERS) is never judged, nor a new one with no history")
    func smallService() {
        let guardian = IntakeGuard()
        #expect(guardian.gaps(in: Self.days, intake: Self.intake(99, ["2026-01-11": 0, "2026-01-12": 0])).isEmpty)
        #expect(guardian.gaps(in: Self.days, intake: [Self.day("2026-01-12"): 500]).isEmpty)
        #expect(IntakeGuard(minUsers: 50).gaps(in: Self.days, intake: Self.intake(99, ["2026-01-12": 0])) == [Self.day("2026-01-12")])
    }

    @Test("the median is of the 14 days before the day, the mean of the middle two: a growing service judges against its recent days")
    func median() {
        // 14 days before 2026-01-12: seven at 100, seven at 300 → median 200; 99 < 100 = 0.5 × 200.
        var intake: [CalendarDate: Int] = [:]
        for offset in 1...14 { intake[Self.day("2026-01-12").adding(days: -offset)] = offset <= 7 ? 300 : 100 }
        intake[Self.day("2026-01-12")] = 99
        #expect(IntakeGuard().gaps(in: Self.day("2026-01-12")...Self.day("2026-01-12"), intake: intake) == [Self.day("2026-01-12")])
        intake[Self.day("2026-01-12")] = 100
        #expect(IntakeGuard().gaps(in: Self.day("2026-01-12")...Self.day("2026-01-12"), intake: intake).isEmpty)
        // Days older than 14 before it do not count: a quiet month ago changes nothing.
        intake[Self.day("2026-01-12").adding(days: -15)] = 0
        #expect(IntakeGuard.window(for: Self.day("2026-01-12")...Self.day("2026-01-12")).lowerBound == Self.day("2025-12-29"))
    }

    @Test("INTAKE_DROP_RATIO=0 turns the guard off: no gaps, every alert goes out, held ones too")
    func off() {
        let off = IntakeGuard(dropRatio: 0)
        #expect(off.gaps(in: Self.days, intake: Self.intake(200, ["2026-01-12": 0])).isEmpty)
        let hold = IntakeGuard.Hold(releaseAt: Date().addingTimeInterval(3600), gapDays: [Self.day("2026-01-12")])
        #expect(off.verdict(missed: Self.days, gaps: [Self.day("2026-01-12")], hold: hold, now: Date()) == .send)
    }

    @Test("an alert whose missed days include a gap is held; one whose missed days do not goes out")
    func verdictOnGaps() {
        let guardian = IntakeGuard()
        let gaps: Set = [Self.day("2026-01-11"), Self.day("2026-01-12")]
        // L' = 10th on the 13th: missed 11th and 12th, both gaps.
        let streak = IntakeGuard.missedDays(since: Self.day("2026-01-10"), runDate: Self.day("2026-01-13"))!
        #expect(streak == Self.day("2026-01-11")...Self.day("2026-01-12"))
        #expect(guardian.verdict(missed: streak, gaps: gaps, hold: nil, now: Date()) == .holdNow(gapDays: gaps.sorted()))
        // A user who really stopped on the 5th is due before the outage (missed days 6th–8th on
        // the 9th): no gap among them, the alert goes out on time.
        let before = IntakeGuard.missedDays(since: Self.day("2026-01-05"), runDate: Self.day("2026-01-09"))!
        #expect(guardian.verdict(missed: before, gaps: gaps, hold: nil, now: Date()) == .send)
        #expect(IntakeGuard.missedDays(since: Self.day("2026-01-12"), runDate: Self.day("2026-01-13")) == nil)
    }

    @Test("a recorded hold lasts until its end even when late check-ins lift the day out of the gap; then the alert goes out")
    func recordedHold() {
        let guardian = IntakeGuard()
        let now = Date(timeIntervalSince1970: 1_768_300_000)
        let streak = Self.day("2026-01-11")...Self.day("2026-01-12")
        let hold = IntakeGuard.Hold(releaseAt: now.addingTimeInterval(60), gapDays: [Self.day("2026-01-11")])
        #expect(guardian.verdict(missed: streak, gaps: [], hold: hold, now: now) == .stillHeld(hold))
        #expect(guardian.verdict(missed: streak, gaps: [Self.day("2026-01-11")], hold: hold, now: now.addingTimeInterval(60)) == .send)
        #expect(guardian.verdict(missed: streak, gaps: [], hold: hold, now: now.addingTimeInterval(61)) == .send)
    }

    @Test("gaps agree with a direct computation of the rule over random intakes")
    func randomIntakes() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var intake: [CalendarDate: Int] = [:]
            for offset in 0...40 { intake[Self.day("2026-01-12").adding(days: -offset)] = Int.random(in: 0...400, using: &generator) }
            let ratio = Double.random(in: 0.1...0.9, using: &generator)
            let guardian = IntakeGuard(dropRatio: ratio, minUsers: 150)
            let gaps = guardian.gaps(in: Self.days, intake: intake)
            var expected: [CalendarDate] = []
            for offset in (0...7).reversed() {
                let day = Self.day("2026-01-12").adding(days: -offset)
                let before = (1...14).map { intake[day.adding(days: -$0)]! }.sorted()
                let median = Double(before[6] + before[7]) / 2
                if median >= 150 && Double(intake[day]!) < ratio * median { expected.append(day) }
            }
            #expect(gaps == expected)
        }
    }
}
