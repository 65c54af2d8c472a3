import Foundation
import Values

/// When something happens daily: one wall-clock time (`NOTIFY_TIME`, or a user's `notify_time`)
/// in one IANA time zone (`NOTIFY_TIME_ZONE`, or the user's `time_zone`), once per calendar date
/// of that zone. The service's schedule and every user's own one (`NotifySlots`) follow it.
///
/// Every calendar date of the zone gets exactly one fire instant (see `fireInstant(on:)`), and
/// those instants strictly increase from one date to the next, so walking `nextFire(after:)`
/// visits every date exactly once, also across daylight-saving transitions:
///
/// * **Time exists once:** the job fires at that instant.
/// * **Time falls in a gap** (clocks spring forward, e.g. 02:30 on 2026-03-08 in
///   America/New_York): the job fires at the first instant after the gap (the transition,
///   03:00 EDT = 07:00Z) — the earliest moment at which the date's time has passed, so a
///   contact is told as soon as the user's chosen time is over and never later. Every time
///   inside the gap fires at that same instant. (RFC 5545 and `Calendar.date(from:)` would
///   shift the time by the gap's length instead, to 03:30: half an hour after the time had
///   passed.)
/// * **The whole date is skipped** (Pacific/Apia jumped from 2011-12-29 24:00 to 2011-12-31
///   00:00; Pacific/Kwajalein skipped 1993-08-21): no wall clock in the zone ever showed that
///   date, so it gets no fire: `nextFire(after:)` and `latestFire(atOrBefore:)` never return
///   it. (Firing it at the first instant after the gap would coincide with the next date's
///   fire when the time is 00:00.) `fireInstant(on:)` for such a date returns that first
///   instant after the gap.
/// * **Time occurs twice** (clocks fall back, e.g. 01:30 on 2026-11-01 in
///   America/New_York): the job fires once, at the *first* occurrence (01:30 EDT = 05:30Z).
///   The repeated 01:30 EST an hour later is not a fire.
///
/// The resolution is done with `TimeZone.secondsFromGMT(for:)` and
/// `TimeZone.nextDaylightSavingTimeTransition(after:)` (which reports every UTC-offset change,
/// not only DST ones) instead of `Calendar.nextDate(after:matching:...)`, whose policy
/// defaults for skipped and repeated times are not the rules above.
package struct DailySchedule: Sendable, Equatable {
    /// The configured wall-clock time of day.
    package let time: TimeOfDay
    /// The zone whose wall clock and calendar dates the schedule follows.
    package var timeZone: TimeZone { offsets.timeZone }
    /// The zone's offsets, shared by the schedules of one zone (`NotifySlots`): the zone
    /// database is asked once per zone, not once per time and date.
    package let offsets: ZoneOffsets

    /// How far on either side of the wanted wall time to look for UTC-offset changes. Real
    /// offsets stay within about ±16 h, so every instant that can show the wanted wall time,
    /// and the transition that causes a gap around it, lies inside this window.
    static let searchRadius = 36 * 3_600

    /// Creates a schedule firing daily at `time` in `timeZone`.
    ///
    /// - Precondition: `time.hour` is in `0...23` and `time.minute` in `0...59` (the
    ///   configuration parser is expected to have rejected anything else).
    package init(time: TimeOfDay, timeZone: TimeZone) {
        self.init(time: time, offsets: ZoneOffsets(timeZone))
    }

    /// Creates a schedule firing daily at `time` in the zone of `offsets`, sharing its lookups.
    package init(time: TimeOfDay, offsets: ZoneOffsets) {
        precondition((0...23).contains(time.hour) && (0...59).contains(time.minute),
                     "DailySchedule needs a time of day between 00:00 and 23:59, got \(time.description)")
        self.time = time
        self.offsets = offsets
    }

    /// The same time in the same zone (whatever lookups each has kept).
    package static func == (lhs: DailySchedule, rhs: DailySchedule) -> Bool {
        lhs.time == rhs.time && lhs.timeZone == rhs.timeZone
    }

    /// The instant at which the job fires for calendar date `date` of `timeZone`.
    ///
    /// Normally the instant the zone's clocks show `time` on `date`; for a time skipped by
    /// a forward transition, a time that occurs twice and a date the zone skipped entirely,
    /// see the rules on `DailySchedule`. Always whole seconds.
    package func fireInstant(on date: CalendarDate) -> Date {
        Date(timeIntervalSince1970: TimeInterval(resolve(date).second))
    }

    /// The first fire strictly after `now`, with the calendar date it is the run for.
    ///
    /// Use the returned `date` (not `runDate(at:)` at wake-up) as the run's date: in the rare
    /// case of a gap reaching midnight the fire for a date happens on the next local date.
    /// Dates the zone skipped entirely are never returned.
    package func nextFire(after now: Date) -> (date: CalendarDate, instant: Date) {
        let today = runDate(at: now)
        var best: (date: CalendarDate, instant: Date)?
        // Fires are strictly increasing per date, and the fire for `today + 1` is after `now`
        // for every real zone; the wider scan only guards against pathological zone data.
        for dayOffset in -2...7 {
            let date = today.adding(days: dayOffset)
            let resolution = resolve(date)
            let instant = Date(timeIntervalSince1970: TimeInterval(resolution.second))
            if resolution.dateExists, instant > now, best.map({ instant < $0.instant }) ?? true {
                best = (date, instant)
            }
            if dayOffset >= 1, best != nil { break }
        }
        guard let best else {
            preconditionFailure("no fire within a week after \(now) in \(timeZone.identifier)")
        }
        return best
    }

    /// The most recent fire at or before `now`, with the calendar date it is the run for.
    ///
    /// For catch-up at start-up: if this run has not completed yet, run it at once for the
    /// returned date (e.g. started at 10:00 when the time is 09:00 → today's date; started at
    /// 08:00 → yesterday's). Dates the zone skipped entirely are never returned.
    package func latestFire(atOrBefore now: Date) -> (date: CalendarDate, instant: Date) {
        let today = runDate(at: now)
        var best: (date: CalendarDate, instant: Date)?
        for dayOffset in stride(from: 1, through: -7, by: -1) {
            let date = today.adding(days: dayOffset)
            let resolution = resolve(date)
            let instant = Date(timeIntervalSince1970: TimeInterval(resolution.second))
            if resolution.dateExists, instant <= now, best.map({ instant > $0.instant }) ?? true {
                best = (date, instant)
            }
            if dayOffset <= -1, best != nil { break }
        }
        guard let best else {
            preconditionFailure("no fire within a week before \(now) in \(timeZone.identifier)")
        }
        return best
    }

    /// The calendar date the zone's wall clock shows at `now` ("today").
    package func runDate(at now: Date) -> CalendarDate {
        CalendarDate(dayNumber: offsets.localDay(at: now))
    }

    // MARK: - Resolution

    /// Where the configured time lands on one calendar date.
    private struct Resolution {
        /// The fire instant, in whole seconds since 1970-01-01T00:00:00Z.
        let second: Int
        /// Whether the zone's wall clock shows `date` at any instant at all (false only for a
        /// date skipped entirely, such as 2011-12-30 in Pacific/Apia).
        let dateExists: Bool
    }

    /// Applies the rules on `DailySchedule` to `date`.
    private func resolve(_ date: CalendarDate) -> Resolution {
        // The wanted wall time, counted in seconds as if the zone were UTC.
        let wall = date.dayNumber * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        // The zone's offsets around `wall`: at least ±`searchRadius`, which holds every instant
        // asked about below. (A wider span changes nothing: an offset far from `wall` gives no
        // instant that shows it, and a gap far from it does not hold it.)
        let stretch = offsets.stretch(around: wall)
        let segments = stretch.segments
        func offsetAt(_ second: Int) -> Int { stretch.offset(at: second) }

        // Every instant that shows `wall` is `wall - offset` for an offset in force at that
        // instant. Checked against the zone's offset at that instant; the earliest one wins.
        var earliest: Int?
        for offset in segments.lazy.map(\.offset) {
            let candidate = wall - offset
            if offsetAt(candidate) == offset, candidate < earliest ?? .max {
                earliest = candidate
            }
        }
        if let earliest { return Resolution(second: earliest, dateExists: true) }

        // No instant shows `wall`: it lies in the gap of a forward transition, which skips
        // the wall times [transition + before.offset, transition + after.offset).
        for (before, after) in zip(segments, segments.dropFirst()) where after.offset > before.offset {
            let transition = after.start
            let gapStart = transition + before.offset, gapEnd = transition + after.offset
            guard wall >= gapStart, wall < gapEnd else { continue }
            let dayStart = date.dayNumber * 86_400
            let skipsWholeDate = gapStart <= dayStart && gapEnd >= dayStart + 86_400
            return Resolution(second: transition, dateExists: !skipsWholeDate)
        }

        // Unreachable with consistent zone data; degrade like mktime rather than crash.
        return Resolution(second: wall - offsetAt(wall - offsetAt(wall)), dateExists: true)
    }
}
