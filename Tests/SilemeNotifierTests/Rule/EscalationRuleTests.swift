import Foundation
import Testing
@testable import Rule

/// The escalation step (docs/escalation.md), pure: one alerted streak's facts and the clock.
/// The contacts: three of the first tier (a, b, c) and one of the second (n), as in the
/// integration test; `ESCALATE_AFTER` is 3 hours.
@Suite("Escalation rule")
struct EscalationRuleTests {
    typealias C = EscalationRule.Contact
    static let rule = EscalationRule(after: .seconds(3 * 3600))
    static let sent = Date(timeIntervalSince1970: 1_768_266_000)  // 2026-01-13 01:00 UTC
    static func at(hours: Double) -> Date { sent.addingTimeInterval(hours * 3600) }
    static let family = [C(key: "a@example.com", tier: 1, alerted: true, bounced: false),
                         C(key: "b@example.com", tier: 1, alerted: true, bounced: false),
                         C(key: "c@example.com", tier: 1, alerted: true, bounced: false),
                         C(key: "n@example.com", tier: 2, alerted: false, bounced: false)]
    static func facts(_ change: (inout EscalationRule.Facts) -> Void = { _ in }) -> EscalationRule.Facts {
        var facts = EscalationRule.Facts(firstSentAt: sent, contacts: family)
        change(&facts)
        return facts
    }
    static let everyone = EscalationRule.Escalation(cause: .waitedOut, notices: ["a@example.com", "b@example.com", "c@example.com"],
                                                    firstAlerts: ["n@example.com"])

    @Test("nobody answers: wait until ESCALATE_AFTER, escalate to the first tier and alert the second, then unheard as long after")
    func nobodyAnswers() {
        #expect(Self.rule.step(Self.facts(), now: Self.sent) == .wait(until: Self.at(hours: 3)))
        #expect(Self.rule.step(Self.facts(), now: Self.at(hours: 2.99)) == .wait(until: Self.at(hours: 3)))
        #expect(Self.rule.step(Self.facts(), now: Self.at(hours: 3)) == .escalate(Self.everyone))
        // Down for a day: the step comes at once when the daemon looks again, and only that step.
        #expect(Self.rule.step(Self.facts(), now: Self.at(hours: 30)) == .escalate(Self.everyone))
        let escalated = Self.facts { $0.escalatedAt = Self.at(hours: 3.5); $0.contacts[3].alerted = true }
        #expect(Self.rule.step(escalated, now: Self.at(hours: 3.5)) == .wait(until: Self.at(hours: 6.5)), "counted from the escalation")
        #expect(Self.rule.step(escalated, now: Self.at(hours: 6.5)) == .unheard(.waitedOut))
        #expect(Self.rule.step(escalated, now: Self.at(hours: 99)) == .unheard(.waitedOut))
        let unheard = Self.facts { $0.escalatedAt = Self.at(hours: 3); $0.unheardAt = Self.at(hours: 6) }
        #expect(Self.rule.step(unheard, now: Self.at(hours: 99)) == .settled(.unheard), "nothing more is sent")
    }

    @Test("heard: a check-in or an acknowledgement settles it at every stage; a check-in wins over everything")
    func heard() {
        for escalated in [nil, Self.at(hours: 3)] {
            for now in [Self.sent, Self.at(hours: 3), Self.at(hours: 7)] {
                #expect(Self.rule.step(Self.facts { $0.checkedIn = true; $0.escalatedAt = escalated }, now: now) == .settled(.checkedIn))
                #expect(Self.rule.step(Self.facts { $0.acknowledged = true; $0.escalatedAt = escalated }, now: now) == .settled(.acknowledged))
            }
        }
        let everything = Self.facts {
            $0.checkedIn = true; $0.acknowledged = true; $0.outcome = (.unreachable, "a@example.com", Self.at(hours: 1))
            $0.escalatedAt = Self.at(hours: 1); $0.unheardAt = Self.at(hours: 4)
        }
        #expect(Self.rule.step(everything, now: Self.at(hours: 5)) == .settled(.checkedIn))
    }

    @Test("\"They're OK\" closes the streak: no escalation, no unheard")
    func reportedOK() {
        let ok = Self.facts { $0.acknowledged = true; $0.outcome = (.ok, "b@example.com", Self.at(hours: 1)) }
        #expect(Self.rule.step(ok, now: Self.at(hours: 1)) == .settled(.reportedOK))
        #expect(Self.rule.step(ok, now: Self.at(hours: 50)) == .settled(.reportedOK))
        var after = ok
        after.escalatedAt = Self.at(hours: 3)
        #expect(Self.rule.step(after, now: Self.at(hours: 50)) == .settled(.reportedOK))
    }

    @Test("\"I couldn't reach them\" takes the acknowledgement back and brings the next step at once — only the next")
    func unreachable() {
        let early = Self.facts { $0.acknowledged = true; $0.outcome = (.unreachable, "b@example.com", Self.at(hours: 0.5)) }
        #expect(Self.rule.step(early, now: Self.at(hours: 0.5)) == .escalate(.init(
            cause: .unreachable, notices: ["a@example.com", "c@example.com"], firstAlerts: ["n@example.com"])),
            "the one who said it needs no notice")
        var escalated = early
        escalated.escalatedAt = Self.at(hours: 0.5)
        #expect(Self.rule.step(escalated, now: Self.at(hours: 0.6)) == .wait(until: Self.at(hours: 3.5)),
                "said before the escalation: unheard waits its full time")
        #expect(Self.rule.step(escalated, now: Self.at(hours: 3.5)) == .unheard(.waitedOut))
        let late = Self.facts {
            $0.acknowledged = true; $0.escalatedAt = Self.at(hours: 3); $0.outcome = (.unreachable, "n@example.com", Self.at(hours: 4))
        }
        #expect(Self.rule.step(late, now: Self.at(hours: 4)) == .unheard(.unreachable))
    }

    @Test("every first-tier alert bounced: escalate at once, to the second tier alone; some bounced: the rest are told in time")
    func bounces() {
        let all = Self.facts { for i in 0..<3 { $0.contacts[i].bounced = true } }
        #expect(Self.rule.allBounced(all))
        #expect(Self.rule.step(all, now: Self.sent) == .escalate(.init(cause: .allBounced, notices: [], firstAlerts: ["n@example.com"])))
        let two = Self.facts { $0.contacts[0].bounced = true; $0.contacts[2].bounced = true }
        #expect(!Self.rule.allBounced(two))
        #expect(Self.rule.step(two, now: Self.at(hours: 1)) == .wait(until: Self.at(hours: 3)))
        #expect(Self.rule.step(two, now: Self.at(hours: 3)) == .escalate(.init(cause: .waitedOut, notices: ["b@example.com"],
                                                                                    firstAlerts: ["n@example.com"])))
        // A first-tier contact whose alert was never accepted (refused for good) is neither told
        // nor counted: the two accepted ones bounced, so nobody read it.
        let refused = Self.facts { $0.contacts[0].alerted = false; $0.contacts[1].bounced = true; $0.contacts[2].bounced = true }
        #expect(Self.rule.step(refused, now: Self.sent) == .escalate(.init(cause: .allBounced, notices: [], firstAlerts: ["n@example.com"])))
        // A second-tier address known dead gets no alert; nor does one alerted already.
        let deadNeighbour = Self.facts { $0.contacts[3].bounced = true; $0.contacts.append(C(key: "m@example.com", tier: 2, alerted: true, bounced: false)) }
        #expect(Self.rule.step(deadNeighbour, now: Self.at(hours: 3))
                == .escalate(.init(cause: .waitedOut, notices: ["a@example.com", "b@example.com", "c@example.com"], firstAlerts: [])))
        // After the escalation a bounce hurries nothing.
        let later = Self.facts { for i in 0..<3 { $0.contacts[i].bounced = true }; $0.escalatedAt = Self.at(hours: 0) }
        #expect(Self.rule.step(later, now: Self.at(hours: 1)) == .wait(until: Self.at(hours: 3)))
    }

    @Test("alerts refused as spam or by a full mailbox bounced too: all of them escalate at once, and those contacts still get the notice")
    func liveBounces() {
        let all = Self.facts { for i in 0..<3 { $0.contacts[i].bounced = true; $0.contacts[i].stillInUse = i != 1 } }
        #expect(Self.rule.allBounced(all))
        #expect(Self.rule.step(all, now: Self.sent)
                == .escalate(.init(cause: .allBounced, notices: ["a@example.com", "c@example.com"], firstAlerts: ["n@example.com"])))
    }

    @Test("no second tier: the escalation tells the first tier; seconds as short as the tests use")
    func shapes() {
        let one = EscalationRule(after: .seconds(45))
        let facts = EscalationRule.Facts(firstSentAt: Self.sent, contacts: [C(key: "a@example.com", tier: 1, alerted: true, bounced: false)])
        #expect(one.seconds == 45)
        #expect(one.step(facts, now: Self.sent.addingTimeInterval(44.9)) == .wait(until: Self.sent.addingTimeInterval(45)))
        #expect(one.step(facts, now: Self.sent.addingTimeInterval(45)) == .escalate(.init(cause: .waitedOut, notices: ["a@example.com"], firstAlerts: [])))
        #expect(EscalationRule(after: .milliseconds(1500)).seconds == 1.5)
    }

    @Test("no first-tier contact alerted (all of the second tier, alerted at once): they are the first alert's contacts — told, and counted for 'all bounced'")
    func secondTierAlone() {
        let neighbours = EscalationRule.Facts(firstSentAt: Self.sent, contacts: [C(key: "n@example.com", tier: 2, alerted: true, bounced: false),
                                                                                C(key: "m@example.com", tier: 2, alerted: true, bounced: false)])
        #expect(Self.rule.firstWave(neighbours).map(\.key) == ["n@example.com", "m@example.com"])
        #expect(Self.rule.step(neighbours, now: Self.at(hours: 1)) == .wait(until: Self.at(hours: 3)))
        #expect(Self.rule.step(neighbours, now: Self.at(hours: 3))
                == .escalate(.init(cause: .waitedOut, notices: ["n@example.com", "m@example.com"], firstAlerts: [])))
        var dead = neighbours
        dead.contacts[0].bounced = true
        dead.contacts[1].bounced = true
        #expect(Self.rule.step(dead, now: Self.sent) == .escalate(.init(cause: .allBounced, notices: [], firstAlerts: [])))
        // With a first-tier contact alerted, a second-tier one alerted too (by the escalation) is
        // not of the first alert: never told of its own escalation, never counted.
        let both = Self.facts { $0.contacts[3].alerted = true }
        #expect(Self.rule.firstWave(both).map(\.key) == ["a@example.com", "b@example.com", "c@example.com"])
    }

    /// The oracle: the requirements read directly, for one streak at one instant.
    static func oracle(_ f: EscalationRule.Facts, now: Date, after: TimeInterval) -> String {
        if f.checkedIn { return "settled" }
        if f.outcome?.kind == .ok { return "settled" }
        if f.unheardAt != nil { return "settled" }
        let wentThenFailed = f.outcome?.kind == .unreachable
        if f.acknowledged && !wentThenFailed { return "settled" }
        if let escalated = f.escalatedAt {
            let failedSince = wentThenFailed && f.outcome!.at > escalated
            return failedSince || now.timeIntervalSince(escalated) >= after ? "unheard" : "wait"
        }
        let firstTier = f.contacts.filter { $0.tier == 1 && $0.alerted }
        let nobodyCanRead = !firstTier.isEmpty && firstTier.allSatisfy(\.bounced)
        return wentThenFailed || nobodyCanRead || now.timeIntervalSince(f.firstSentAt) >= after ? "escalate" : "wait"
    }

    @Test("every combination of the facts against an oracle read from the requirements")
    func exhaustive() {
        var checked = 0
        let bools = [false, true]
        for checkedIn in bools { for acknowledged in bools { for escalated in bools { for unheard in bools where !unheard || escalated {
            for outcome in [nil, EscalationRule.Outcome.ok, .unreachable] { for outcomeHours in [0.5, 4.0] {
                for bounced in 0...3 { for neighbourAlerted in bools { for nowHours in [0.0, 2.0, 3.0, 3.5, 6.0, 7.0, 100.0] {
                    let facts = Self.facts {
                        $0.checkedIn = checkedIn; $0.acknowledged = acknowledged || outcome != nil
                        $0.escalatedAt = escalated ? Self.at(hours: 3) : nil; $0.unheardAt = unheard ? Self.at(hours: 6) : nil
                        $0.outcome = outcome.map { ($0, "a@example.com", Self.at(hours: outcomeHours)) }
                        for i in 0..<bounced { $0.contacts[i].bounced = true }
                        $0.contacts[3].alerted = neighbourAlerted
                    }
                    if outcome != nil && nowHours < outcomeHours { continue }  // an outcome not yet said
                    let now = Self.at(hours: nowHours)
                    let step = Self.rule.step(facts, now: now)
                    let kind = switch step {
                    case .wait: "wait"
                    case .escalate: "escalate"
                    case .unheard: "unheard"
                    case .settled: "settled"
                    }
                    #expect(kind == Self.oracle(facts, now: now, after: Self.rule.seconds), "\(facts) at \(nowHours) h: \(step)")
                    if case .wait(let until) = step { #expect(until > now) }
                    if case .escalate(let escalation) = step {
                        #expect(escalation.notices.allSatisfy { key in facts.contacts.contains { $0.key == key && $0.tier == 1 && !$0.bounced } })
                        #expect(!escalation.notices.contains("a@example.com") || facts.outcome == nil, "the reporter is not told")
                        #expect(escalation.firstAlerts == (neighbourAlerted ? [] : ["n@example.com"]))
                    }
                    checked += 1
                }}}
            }}
        }}}}
        print("Escalation rule: \(checked) combinations checked against the oracle")
        #expect(checked > 2000)
    }
}
