import Testing
@testable import Values
@testable import Rule

/// The guards of docs/guards.md in the pure rule: pause, superseded accounts, the trusted dates.
@Suite("MissRule guards (docs/guards.md)")
struct GuardRuleTests {
    let rule = MissRule(thresholdDays: 2, catchUpDays: 7)
    let last = CalendarDate(parsing: "2026-01-10")!
    let runDate = CalendarDate(parsing: "2026-01-13")!

    func day(_ text: String) -> CalendarDate { CalendarDate(parsing: text)! }

    func candidate(id: String = "u5", name: String? = "张三", paused: String? = nil, others: [OtherAccount] = [],
                   notified: Bool = false, last: CalendarDate? = nil) -> Candidate {
        Candidate(userID: id, rawName: name, rawEmail: "family@example.com", lastCheckIn: last ?? self.last,
                  notifiedInStreak: notified, pausedUntil: paused.map(day), sameContact: others)
    }

    @Test("the rule trusts check-ins up to D + 1")
    func trustedDates() {
        #expect(rule.latestTrustedCheckIn(runDate: runDate) == day("2026-01-14"))
    }

    @Test("a pause that ended before L changes nothing")
    func pauseBefore() throws {
        let evaluation = try #require(rule.evaluate(candidate(paused: "2026-01-05"), runDate: runDate))
        #expect(evaluation.decision == .send)
        #expect(evaluation.missedDays == 2)
        #expect(rule.jobs(for: candidate(paused: "2026-01-05"), evaluation).first?.pausedUntil == nil)
    }

    @Test("while paused_until ≥ D: paused, m counted from L (the days since the last check-in), before stale")
    func pauseDuring() throws {
        for end in ["2026-01-13", "2026-02-01"] {
            let evaluation = try #require(rule.evaluate(candidate(paused: end), runDate: runDate))
            #expect(evaluation.decision == .paused)
            #expect(evaluation.missedDays == 2)
            #expect(evaluation.reason == "paused until \(end)")
        }
        let longGone = candidate(paused: "2026-01-20", last: day("2025-06-01"))
        #expect(rule.evaluate(longGone, runDate: runDate)?.decision == .paused)
        // Below the threshold by L: not listed, paused or not.
        #expect(rule.evaluate(candidate(paused: "2026-01-20", last: day("2026-01-12")), runDate: runDate) == nil)
    }

    @Test("after a pause: L' = paused_until, m counted from it, the job carries the pause's end")
    func pauseAfter() throws {
        let away = candidate(paused: "2026-01-20")
        #expect(rule.effectiveLastCheckIn(away) == day("2026-01-20"))
        #expect(rule.evaluate(away, runDate: day("2026-01-21")) == nil)  // m = 0
        #expect(rule.evaluate(away, runDate: day("2026-01-22")) == nil)  // m = 1
        let evaluation = try #require(rule.evaluate(away, runDate: day("2026-01-23")))
        #expect(evaluation.decision == .send)
        #expect(evaluation.missedDays == 2)
        let job = try #require(rule.jobs(for: away, evaluation).first)
        #expect(job.pausedUntil == day("2026-01-20"))
        #expect(job.lastCheckIn == last)
        #expect(job.countedFrom == day("2026-01-20"))
        // An L months old with a pause that ended 10 days ago is stale from the pause's end.
        #expect(rule.evaluate(candidate(paused: "2026-01-20", last: day("2025-06-01")), runDate: day("2026-01-31"))?.decision == .stale)
    }

    @Test("superseded: same cleaned name, a check-in after L'; the newest such account is named")
    func superseded() throws {
        let newer = OtherAccount(userID: "u9", rawName: " 张三\t", lastCheckIn: day("2026-01-12"))
        let evaluation = try #require(rule.evaluate(candidate(others: [
            OtherAccount(userID: "u7", rawName: "张三", lastCheckIn: day("2026-01-11")), newer,
        ]), runDate: runDate))
        #expect(evaluation.decision == .superseded)
        #expect(evaluation.supersededBy == newer)
        #expect(evaluation.reason == "superseded: newer account u9 (same contact and name) checked in on 2026-01-12")
        #expect(rule.jobs(for: candidate(others: [newer]), evaluation).isEmpty)
    }

    @Test("not superseded: another name, no check-in, an older check-in, SUPERSEDE=off")
    func notSuperseded() throws {
        let others = [
            OtherAccount(userID: "u1", rawName: "张四", lastCheckIn: day("2026-01-12")),
            OtherAccount(userID: "u2", rawName: "张三", lastCheckIn: nil),
            OtherAccount(userID: "u3", rawName: "张三", lastCheckIn: day("2026-01-09")),
            OtherAccount(userID: "u4", rawName: "", lastCheckIn: day("2026-01-12")),
        ]
        #expect(rule.evaluate(candidate(others: others), runDate: runDate)?.decision == .send)
        let off = MissRule(thresholdDays: 2, catchUpDays: 7, supersede: false)
        let newer = OtherAccount(userID: "u9", rawName: "张三", lastCheckIn: day("2026-01-12"))
        #expect(off.evaluate(candidate(others: [newer]), runDate: runDate)?.decision == .send)
    }

    @Test("two accounts silent since the same day alert once: the one with the greater id is kept")
    func sameDayTie() throws {
        let a = candidate(id: "aaa", others: [OtherAccount(userID: "bbb", rawName: "张三", lastCheckIn: last)])
        let b = candidate(id: "bbb", others: [OtherAccount(userID: "aaa", rawName: "张三", lastCheckIn: last)])
        #expect(rule.evaluate(a, runDate: runDate)?.decision == .superseded)
        #expect(rule.evaluate(b, runDate: runDate)?.decision == .send)
    }

    @Test("superseded is compared with L' after a pause; paused, stale and already-notified come first")
    func order() throws {
        let newer = OtherAccount(userID: "u9", rawName: "张三", lastCheckIn: day("2026-01-15"))
        // Paused until 01-20: the newer account's 01-15 is not after L' = 01-20.
        #expect(rule.evaluate(candidate(paused: "2026-01-20", others: [newer]), runDate: day("2026-01-23"))?.decision == .send)
        #expect(rule.evaluate(candidate(paused: "2026-01-20", others: [newer]), runDate: runDate)?.decision == .paused)
        #expect(rule.evaluate(candidate(others: [newer], notified: true), runDate: runDate)?.decision == .alreadyNotified)
        #expect(rule.evaluate(candidate(others: [newer], last: day("2025-12-01")), runDate: runDate)?.decision == .stale)
    }

    @Test("the summary names the first five decisions always, the guards' when counted; skips are recorded for bad data and superseded")
    func decisions() {
        #expect(Decision.allCases.filter(\.alwaysSummarised).map(\.rawValue) == ["send", "already_notified", "stale", "invalid_email", "invalid_name"])
        #expect(Decision.allCases.filter(\.recordsSkip) == [.invalidEmail, .invalidName, .superseded])
    }
}
