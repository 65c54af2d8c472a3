import Foundation
@testable import Store
import Testing
import Values
@testable import Admin
@testable import Delivery

/// Escalation for operators, the pure parts (docs/escalation.md): the metrics file's counters and
/// gauges, and `check`'s escalation line.
@Suite("Escalation in the metrics and check")
struct EscalationReportingTests {
    static let time = Date(timeIntervalSince1970: 1_768_266_000)  // 2026-01-13T01:00:00Z

    static var figures: EscalationFigures {
        var figures = EscalationFigures()
        figures.escalated = 12
        figures.declaredUnheard = 4
        figures.open = 2
        figures.unheard = 3
        figures.oldestUnheard = .init(userID: "6f0c3a52-1b0e-4f51-9d4e-0c2a5e1b7d10", alertDate: CalendarDate(year: 2026, month: 1, day: 11)!,
                                      since: time.addingTimeInterval(-5 * 3600))
        return figures
    }

    @Test("the metrics file: two counters, two gauges, and when the oldest unheard streak was declared")
    func metrics() {
        var housekeeping = Housekeeping.Figures()
        housekeeping.escalation = Self.figures
        let text = MetricsFile.render(housekeeping, now: Self.time)
        for line in ["# TYPE sileme_notifier_escalations_total counter", "sileme_notifier_escalations_total 12",
                     "# TYPE sileme_notifier_unheard_total counter", "sileme_notifier_unheard_total 4",
                     "# TYPE sileme_notifier_escalations_open gauge", "sileme_notifier_escalations_open 2",
                     "# TYPE sileme_notifier_unheard_streaks gauge", "sileme_notifier_unheard_streaks 3",
                     "sileme_notifier_unheard_oldest_timestamp_seconds 1768248000"] {
            #expect(text.contains(line + "\n"), "\(line)")
        }
        // Nothing escalated: zeros, and no oldest.
        let quiet = MetricsFile.render(Housekeeping.Figures(), now: Self.time)
        #expect(quiet.contains("sileme_notifier_escalations_total 0\n") && quiet.contains("sileme_notifier_unheard_streaks 0\n"))
        #expect(!quiet.contains("unheard_oldest"))
    }

    @Test("check: ok with ESCALATE_AFTER and the open escalations when none is unheard")
    func ok() {
        var figures = Self.figures
        figures.unheard = 0
        figures.oldestUnheard = nil
        let line = HealthCheck.escalation(after: .seconds(3 * 3600), figures: .success(figures), now: Self.time)
        #expect(line.ok && !line.warning)
        #expect(line.detail == "ESCALATE_AFTER 3h; 2 escalated streaks waiting for an answer; none unheard")
        let off = HealthCheck.escalation(after: nil, figures: .success(EscalationFigures()), now: Self.time)
        #expect(off.ok && !off.warning)
        #expect(off.detail == "off (ESCALATE_AFTER=0); 0 escalated streaks waiting for an answer; none unheard")
    }

    @Test("check: warns naming how many are unheard and the oldest; off does not hide them")
    func unheard() {
        let expected = "3 streaks unheard: nobody answered the alert or its escalation; the oldest: user "
            + "6f0c3a52-1b0e-4f51-9d4e-0c2a5e1b7d10's alert of 2026-01-11, unheard since 2026-01-12T20:00:00Z (5 h ago); "
            + "2 escalated streaks waiting for an answer"
        let line = HealthCheck.escalation(after: .seconds(90 * 60), figures: .success(Self.figures), now: Self.time)
        #expect(line.ok && line.warning)
        #expect(line.detail == "ESCALATE_AFTER 90m; " + expected)
        let off = HealthCheck.escalation(after: nil, figures: .success(Self.figures), now: Self.time)
        #expect(off.warning && off.detail == "off (ESCALATE_AFTER=0); " + expected)
    }

    @Test("check: a failed read fails the line; no database, no figures")
    func unread() {
        struct Broken: Error, CustomStringConvertible { var description: String { "relation \"sileme.escalation_tally\" does not exist" } }
        let failed = HealthCheck.escalation(after: .seconds(45), figures: .failure(Broken()), now: Self.time)
        #expect(!failed.ok)
        #expect(failed.detail == "ESCALATE_AFTER 45s; the streaks cannot be read: relation \"sileme.escalation_tally\" does not exist")
        let none = HealthCheck.escalation(after: .seconds(2 * 86_400), figures: nil, now: Self.time)
        #expect(none.ok && none.detail.hasPrefix("ESCALATE_AFTER 2d; "))
    }
}
