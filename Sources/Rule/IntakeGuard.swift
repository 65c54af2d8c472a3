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
    /// median of the `medianDays` days before it (a day missing from `intake` had none; the median of
    /// an even count is the mean of the middle two), where that median is at least `minUsers` — both
    /// counted over the zones where the day is over (`Intake.judged`): a date still running in
    /// some users' zones is judged by the others, against the same zones' usual intake.
    package func gaps(in days: ClosedRange<CalendarDate>, intake: Intake) -> [CalendarDate] {
        guard isOn else { return [] }
        var gaps: [CalendarDate] = []
        var day = days.lowerBound
        while day <= days.upperBound {
            let judged = intake.judged(day)
            if judged.median >= Double(minUsers), Double(judged.intake) < dropRatio * judged.median { gaps.append(day) }
            day = day.adding(days: 1)
        }
        return gaps
    }

    /// The intake gaps among `days` of a service whose every day of `intake` is over (one zone,
    /// judged after the fact).
    package func gaps(in days: ClosedRange<CalendarDate>, intake: [CalendarDate: Int]) -> [CalendarDate] {
        gaps(in: days, intake: Intake(allOver: intake))
    }

    /// The median of `values` (of an even count, the mean of the middle two).
    static func median(of values: [Int]) -> Double {
        let sorted = values.sorted()
        return Double(sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2
    }

    /// The intake of each day by the users' zone, and how far each zone's calendar has come — what
    /// the guard needs to judge a date only where it is over (docs/intake-hold.md, "A day is
    /// judged where it is over").
    ///
    /// Why per zone: at 20:00 UTC Auckland's yesterday is over and Los Angeles is at 13:00 of it.
    /// Counted across every zone, a Los Angeles-heavy service's yesterday looks 60% short at
    /// Auckland's morning, and every due Auckland user would be held with a `crit` — every day.
    /// Judged over the zones where it has ended, against those zones' own usual intake, the date
    /// is a gap only when the users who could have checked in on it did not.
    package struct Intake: Sendable, Equatable {
        /// Users with a check-in dated each day, by zone key (the users' `time_zone` as stored;
        /// `""` for none). A day or zone missing had none.
        package var counts: [CalendarDate: [String: Int]]
        /// Each zone key's own date when the intake was read: the days before it are over there.
        /// A zone missing here counts nowhere (its days are never taken for over).
        package var today: [String: CalendarDate]

        /// Creates the value.
        package init(counts: [CalendarDate: [String: Int]], today: [String: CalendarDate]) {
            self.counts = counts
            self.today = today
        }

        /// The intake `counts` as read at `now`: each zone key's own date then, a key that names no
        /// zone the database knows (none, or a misspelt one) in `serviceZone`, as the users' slots
        /// read them (`NotifySlots`).
        package init(counts: [CalendarDate: [String: Int]], at now: Date, serviceZone: TimeZone) {
            var today: [String: CalendarDate] = [:]
            for key in Set(counts.values.flatMap(\.keys)) {
                today[key] = CalendarDate(now, in: NotifySlots.Slot.zone(named: key) ?? serviceZone)
            }
            self.init(counts: counts, today: today)
        }

        /// One zone whose every day of `intake` is over.
        package init(allOver intake: [CalendarDate: Int]) {
            counts = intake.mapValues { ["": $0] }
            today = ["": CalendarDate(dayNumber: Int.max / 2)]
        }

        /// The zones where `day` is over: those whose own date is past it.
        package func zones(over day: CalendarDate) -> Set<String> {
            Set(today.lazy.filter { $0.value > day }.map(\.key))
        }

        /// `day`'s intake over `zones`.
        package func intake(of day: CalendarDate, over zones: Set<String>) -> Int {
            guard let byZone = counts[day] else { return 0 }
            return zones.count < byZone.count
                ? zones.reduce(0) { $0 + (byZone[$1] ?? 0) }
                : byZone.reduce(0) { zones.contains($1.key) ? $0 + $1.value : $0 }
        }

        /// `day` as the guard judges it: its intake over the zones where it is over, and the
        /// median intake of the same zones over the `medianDays` days before it (over there too,
        /// being earlier).
        package func judged(_ day: CalendarDate) -> (intake: Int, median: Double) {
            let zones = zones(over: day)
            guard !zones.isEmpty else { return (0, 0) }
            let before = (1...IntakeGuard.medianDays).map { intake(of: day.adding(days: -$0), over: zones) }
            return (intake(of: day, over: zones), IntakeGuard.median(of: before))
        }
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
