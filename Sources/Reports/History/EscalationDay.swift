import Values

/// Escalation on one day of the period (docs/escalation.md): the streaks whose alert is dated
/// that day — how long it took until a contact said "I'm on it", how many escalated, how many
/// were declared unheard, and what the contacts who went reported. Also used for the totals.
package struct EscalationDay: Sendable, Equatable {
    /// The alert date; for totals, the first day of the period.
    package var date: CalendarDate
    /// Streaks alerted (an e-mail alert accepted; alerts from before escalation was installed are
    /// not counted).
    package var alerted = 0
    /// The seconds from each acknowledged streak's first accepted alert to its first
    /// acknowledgement, ascending (one per acknowledged streak).
    package var delays: [Double] = []
    /// Streaks escalated.
    package var escalated = 0
    /// Streaks declared unheard.
    package var unheard = 0
    /// Outcomes reported: "They're OK".
    package var outcomeOK = 0
    /// Outcomes reported: "I couldn't reach them".
    package var outcomeUnreachable = 0

    /// Nothing on `date`.
    package init(date: CalendarDate) { self.date = date }

    /// Streaks a contact acknowledged.
    package var acknowledged: Int { delays.count }

    /// The median and 90th percentile of `delays`; nil when none was acknowledged.
    package var timeToAcknowledgement: DelaySummary? { DelaySummary(delays) }

    /// Whether anything is counted.
    package var isEmpty: Bool { alerted == 0 && escalated == 0 && unheard == 0 && outcomeOK == 0 && outcomeUnreachable == 0 }

    /// The period's totals of `days` (the delays of all of them, so that the median is the
    /// period's, not a median of medians), dated on the first day.
    package static func totals(_ days: [EscalationDay]) -> EscalationDay {
        var sum = EscalationDay(date: days.first?.date ?? CalendarDate(dayNumber: 0))
        for day in days {
            sum.alerted += day.alerted
            sum.delays += day.delays
            sum.escalated += day.escalated
            sum.unheard += day.unheard
            sum.outcomeOK += day.outcomeOK
            sum.outcomeUnreachable += day.outcomeUnreachable
        }
        sum.delays.sort()
        return sum
    }
}
