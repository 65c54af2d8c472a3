import Testing
@testable import Values
@testable import Rule

@Suite("MissRule (docs/rule.md)")
struct MissRuleTests {
    let rule = MissRule(thresholdDays: 2, catchUpDays: 7)
    let last = CalendarDate(year: 2026, month: 1, day: 10)!

    func candidate(notified: Bool = false, name: String? = "张三", email: String? = "zhang@example.com",
                   last: CalendarDate? = nil) -> Candidate {
        Candidate(userID: "u1", rawName: name, rawEmail: email, lastCheckIn: last ?? self.last, notifiedInStreak: notified)
    }

    @Test("the design doc's table: L = 2026-01-10",
          arguments: [("2026-01-11", 0, nil), ("2026-01-12", 1, nil), ("2026-01-13", 2, Decision.send),
                      ("2026-01-14", 3, Decision.send)] as [(String, Int, Decision?)])
    func designTable(day: String, missed: Int, decision: Decision?) throws {
        let runDate = try #require(CalendarDate(parsing: day))
        #expect(rule.missedDays(lastCheckIn: last, runDate: runDate) == missed)
        #expect(rule.evaluate(candidate(), runDate: runDate)?.decision == decision)
    }

    /// A candidate with `contacts` as (address, tier).
    func family(_ contacts: [(String, Int)]) -> Candidate {
        var candidate = candidate()
        candidate.contacts = contacts.enumerated().map { .init(email: $1.0, position: $0 + 1, tier: $1.1) }
        return candidate
    }

    @Test("tiers: the first alert goes to the first tier and holds the second back; with escalation off, or no usable first-tier address, everyone at once")
    func tiers() throws {
        let day = try #require(CalendarDate(parsing: "2026-01-13"))
        let mixed = family([("a@example.com", 1), ("n@example.com", 2), ("b@example.com", 1)])
        let held = try #require(rule.evaluate(mixed, runDate: day))
        #expect(held.decision == .send)
        #expect(held.contacts.map(\.address.address) == ["a@example.com", "b@example.com"])
        #expect(held.waiting.map(\.address.address) == ["n@example.com"])
        #expect(rule.jobs(for: mixed, held).map(\.email.address) == ["a@example.com", "b@example.com"])

        var off = rule
        off.secondTierWaits = false
        let everyone = try #require(off.evaluate(mixed, runDate: day))
        #expect(off.jobs(for: mixed, everyone).map { "\($0.email.address)#\($0.position)" }
                == ["a@example.com#1", "n@example.com#2", "b@example.com#3"])
        #expect(everyone.waiting.isEmpty)

        let neighbours = family([("n@example.com", 2), ("m@example.com", 2)])
        let alone = try #require(rule.evaluate(neighbours, runDate: day))
        #expect(rule.jobs(for: neighbours, alone).map(\.email.address) == ["n@example.com", "m@example.com"], "nobody else would be told")
        let unusable = family([("not an address", 1), ("n@example.com", 2)])
        let fallback = try #require(rule.evaluate(unusable, runDate: day))
        #expect(fallback.decision == .send)
        #expect(rule.jobs(for: unusable, fallback).map(\.email.address) == ["n@example.com"])
        #expect(fallback.invalidContacts.map(\.position) == [1])
        // The tier travels with the contact (the dry run shows it).
        #expect(alone.contacts.map(\.tier) == [2, 2])
        #expect(rule.evaluate(candidate(), runDate: day)?.contacts.map(\.tier) == [1], "users.emergency_email is the first tier")
    }

    @Test("2026-01-14 after a mail was accepted on 2026-01-13: no second mail in the streak")
    func oncePerStreak() throws {
        let evaluation = try #require(rule.evaluate(candidate(notified: true), runDate: CalendarDate(parsing: "2026-01-14")!))
        #expect(evaluation.decision == .alreadyNotified)
        #expect(evaluation.missedDays == 3)
    }

    @Test("the catch-up window: due up to threshold + catch-up, stale after")
    func catchUpWindow() throws {
        let lastDue = last.adding(days: 2 + 7 + 1)  // m = 9
        #expect(rule.evaluate(candidate(), runDate: lastDue)?.decision == .send)
        #expect(rule.evaluate(candidate(), runDate: lastDue)?.missedDays == 9)
        #expect(rule.evaluate(candidate(), runDate: lastDue.adding(days: 1))?.decision == .stale)
        // Stale wins over bad data and over an old notification: never mailed, reported as stale.
        #expect(rule.evaluate(candidate(notified: true, email: "bad"), runDate: lastDue.adding(days: 30))?.decision == .stale)
        #expect(rule.latestQualifyingCheckIn(runDate: CalendarDate(parsing: "2026-01-13")!) == last)
    }

    @Test("bad data is skipped with a reason that never holds the address")
    func badData() throws {
        let runDate = CalendarDate(parsing: "2026-01-13")!
        let badEmail = try #require(rule.evaluate(candidate(email: "secret-person at example.com"), runDate: runDate))
        #expect(badEmail.decision == .invalidEmail)
        #expect(badEmail.reason?.contains("secret-person") == false)
        #expect(rule.evaluate(candidate(email: nil), runDate: runDate)?.decision == .invalidEmail)
        #expect(rule.evaluate(candidate(name: " \r\n\t "), runDate: runDate)?.decision == .invalidName)
        #expect(rule.evaluate(candidate(name: nil), runDate: runDate)?.decision == .invalidName)
        let cleaned = try #require(rule.evaluate(candidate(name: "王\r\nBcc: x@y.com"), runDate: runDate))
        #expect(cleaned.decision == .send)
        #expect(cleaned.name?.value == "王 Bcc: x@y.com")
    }

    @Test("a different threshold moves the window")
    func otherThreshold() {
        let strict = MissRule(thresholdDays: 1, catchUpDays: 0)
        #expect(strict.evaluate(candidate(), runDate: CalendarDate(parsing: "2026-01-12")!)?.decision == .send)
        #expect(strict.evaluate(candidate(), runDate: CalendarDate(parsing: "2026-01-13")!)?.decision == .stale)
        #expect(strict.evaluate(candidate(), runDate: CalendarDate(parsing: "2026-01-11")!) == nil)
    }
}
