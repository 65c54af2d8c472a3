import Foundation
import Rule
import Values

/// One streak of a user (docs/rule.md): the days from a check-in `L` to the next check-in, and what the
/// notifier did about it. A mail dated on the day of the next check-in belongs to this streak (it
/// went out that morning before the check-in).
package struct Streak: Sendable, Equatable {
    /// `L`: the check-in that starts the streak.
    package let lastCheckIn: CalendarDate
    /// The next check-in, which ends the streak; nil while it lasts.
    package let nextCheckIn: CalendarDate?
    /// Days without a check-in: up to the next check-in, or, while the streak lasts, through the
    /// report's last day.
    package let missedDays: Int
    /// The date of the accepted mail (`notification_date`), when there is one.
    package let notifiedOn: CalendarDate?
    /// When the server accepted it.
    package let sentAt: Date?
    /// `m` of the accepted mail.
    package let notifiedMissedDays: Int?
    /// The `Message-ID` of the accepted mail.
    package let messageID: String?
    /// Notification rows in the streak (any status).
    package let rows: Int
    /// The status of the streak's latest row, when no mail was accepted.
    package let lastStatus: String?
    /// The error of the streak's latest row, when no mail was accepted.
    package let lastError: String?
    /// The verdict.
    package let outcome: StreakOutcome

    /// Judges a streak: `notified` with an accepted mail; else `superseded` when its latest row is
    /// a `superseded` skip; else `not_sent` when it has rows; else `not_due` when the rule's `m`
    /// never reached its threshold on a day the streak lasted (the last such day is the day before
    /// the next check-in, or `reportEnd`); else `paused` when the user's pause (`pausedUntil`)
    /// kept it below the threshold or lasts through that day; else `no_record`.
    package static func outcome(lastCheckIn: CalendarDate, nextCheckIn: CalendarDate?, reportEnd: CalendarDate,
                        notified: Bool, rows: Int, rule: MissRule, superseded: Bool = false,
                        pausedUntil: CalendarDate? = nil) -> StreakOutcome {
        if notified { return .notified }
        if superseded { return .superseded }
        if rows > 0 { return .notSent }
        // The streak is still on for run dates up to the day before the next check-in (a
        // check-in on D cancels): the largest m the rule saw is on that day.
        let lastDay = nextCheckIn.map { $0.adding(days: -1) } ?? reportEnd
        guard rule.reachesThreshold(missedDays: rule.missedDays(lastCheckIn: lastCheckIn, runDate: lastDay)) else { return .notDue }
        let candidate = Candidate(userID: "", rawName: nil, rawEmail: nil, lastCheckIn: lastCheckIn, notifiedInStreak: false,
                                  pausedUntil: pausedUntil)
        if rule.isPaused(candidate, runDate: lastDay)
            || !rule.reachesThreshold(missedDays: rule.missedDays(lastCheckIn: rule.effectiveLastCheckIn(candidate), runDate: lastDay)) {
            return .paused
        }
        return .noRecord
    }
}
