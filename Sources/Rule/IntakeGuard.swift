import Foundation
import Values

/// The intake guard (docs/intake-hold.md), pure: which days were intake gaps — days on which the
/// app could record far fewer check-ins than usual, its backend being down — and whether an alert
/// whose missed days include one is held.
///
/// A day on which nobody could check in makes every active user miss it; two days later every
/// family would be told at once, and the check-ins the phones queued arrive afterwards. An alert
/// held over such a day is never dropped: it goes out when its hold ends, unless a (late)
/// check-in ends the streak first, like any alert.
package struct IntakeGuard: Sendable, Equatable {
    /// `INTAKE_DROP_RATIO`: a day whose intake is below this share of the median of the days
    /// before it is a gap. 0 turns the guard off.
    package var dropRatio: Double
    /// `INTAKE_MIN_USERS`: a day is judged only where that median is at least this (a small
    /// service's quiet day is ordinary variation).
    package var minUsers: Int
    /// `HOLD_HOURS`: how long an alert is held after it was first held.
    package var holdHours: Double

    /// How many days before a day its median is taken over.
    package static let medianDays = 14

    /// Creates the guard.
    package init(dropRatio: Double = 0.5, minUsers: Int = 100, holdHours: Double = 6) {
        self.dropRatio = dropRatio
        self.minUsers = minUsers
        self.holdHours = holdHours
    }

    /// Whether the guard holds anything (`INTAKE_DROP_RATIO` above 0).
    package var isOn: Bool { dropRatio > 0 }

    /// The days whose intake `gaps(in:intake:)` reads to judge `days`: the median's days before
    /// the first, through the last.
    package static func window(for days: ClosedRange<CalendarDate>) -> ClosedRange<CalendarDate> {
        days.lowerBound.adding(days: -medianDays)...days.upperBound
    }

    /// The intake gaps among `days`, in order: a day whose intake is below `dropRatio` × the
    /// median of the `medianDays` days before it, where that median is at least `minUsers`. A day
    /// missing from `intake` had none. The median of an even count is the mean of the middle two.
    package func gaps(in days: ClosedRange<CalendarDate>, intake: [CalendarDate: Int]) -> [CalendarDate] {
        guard isOn else { return [] }
        var gaps: [CalendarDate] = []
        var day = days.lowerBound
        while day <= days.upperBound {
            let median = Self.median(before: day, intake: intake)
            if median >= Double(minUsers), Double(intake[day] ?? 0) < dropRatio * median { gaps.append(day) }
            day = day.adding(days: 1)
        }
        return gaps
    }

    /// The median intake of the `medianDays` days before `day` (a day missing from `intake` had none).
    package static func median(before day: CalendarDate, intake: [CalendarDate: Int]) -> Double {
        let before = (1...medianDays).map { intake[day.adding(days: -$0)] ?? 0 }.sorted()
        return Double(before[(before.count - 1) / 2] + before[before.count / 2]) / 2
    }

    /// A streak's hold as recorded: when it ends.
    package struct Hold: Sendable, Equatable {
        /// When the held alert goes out (`HOLD_HOURS` after it was first held, or the moment of
        /// `release`).
        package var releaseAt: Date
        /// The gap days it was held for.
        package var gapDays: [CalendarDate]

        /// Creates the value.
        package init(releaseAt: Date, gapDays: [CalendarDate]) {
            self.releaseAt = releaseAt
            self.gapDays = gapDays
        }
    }

    /// What becomes of a due alert.
    package enum Verdict: Sendable, Equatable {
        /// It goes out: no gap among its missed days, or its hold is over.
        case send
        /// Held from now, over these gap days (a hold to record, ending `holdHours` from now).
        case holdNow(gapDays: [CalendarDate])
        /// Still held (recorded before): it goes out at the hold's end.
        case stillHeld(Hold)
    }

    /// The verdict on the alert of a streak whose missed days are `missed` (`L' + 1` through
    /// `D − 1`), given the gap days and the streak's recorded hold, at `now`. A hold, once made,
    /// lasts to its end even if late check-ins lift the day out of the gap: the held alerts go out
    /// together, at a time the operator was told.
    package func verdict(missed: ClosedRange<CalendarDate>, gaps: Set<CalendarDate>, hold: Hold?, now: Date) -> Verdict {
        guard isOn else { return .send }
        if let hold { return now >= hold.releaseAt ? .send : .stillHeld(hold) }
        let inStreak = gaps.filter { missed.contains($0) }.sorted()
        return inStreak.isEmpty ? .send : .holdNow(gapDays: inStreak)
    }

    /// The missed days of a streak counted from `since` (`L'`) on `runDate`: `L' + 1` through
    /// `D − 1` (nil when there is none).
    package static func missedDays(since: CalendarDate, runDate: CalendarDate) -> ClosedRange<CalendarDate>? {
        let first = since.adding(days: 1), last = runDate.adding(days: -1)
        return first <= last ? first...last : nil
    }
}
