import Foundation
import Values

/// One zone's UTC offsets, asked of the zone database once per stretch of days and kept.
///
/// Why: every slot follows a `DailySchedule`, and resolving one date asks the zone database
/// (ICU, behind `TimeZone`) for the transitions and offsets around it — some 20 µs a date.
/// The daemon resolves every slot's latest and next instant several times a minute: with
/// 7,104 slots over 37 zones that was ~70 ms of CPU a minute, the same few lookups per zone
/// repeated for each of its 192 slots. The slots of a zone share one `ZoneOffsets`
/// (`NotifySlots` hands it out), so the database is asked once per zone and stretch.
///
/// A stretch is a span of `stretchDays` days with `margin` on either side, and what it keeps is
/// the zone's offsets over that span as segments between transitions, read with
/// `TimeZone.nextDaylightSavingTimeTransition(after:)` (which reports every change of the
/// offset, not only DST ones) and `TimeZone.secondsFromGMT(for:)`. An offset read from the
/// segments is what `secondsFromGMT` says at that second (a unit test compares them hour by hour
/// over two years in every zone the database knows, and at each transition).
package final class ZoneOffsets: Sendable, CustomStringConvertible {
    /// The zone.
    package let timeZone: TimeZone
    /// The stretches read so far with their numbers (`second` ÷ `stretchSeconds`, rounded down),
    /// the latest read first: a daemon uses one or two at a time, so a short scan finds them
    /// sooner than a hash.
    private let stretches = Locked<[(number: Int, stretch: Stretch)]>([])

    /// The days of one stretch: the daemon's instants over a fortnight fall in one or two.
    static let stretchDays = 16
    /// How far beyond a stretch's own days its segments reach: a date's resolution looks
    /// `DailySchedule.searchRadius` (36 h) either side of its wall time — an instant of the
    /// stretch's days, counted as if the zone were UTC — so every look stays inside.
    static let margin = 2 * DailySchedule.searchRadius
    /// Stretches kept at most (then all are dropped and read again): over a year's worth, far more
    /// than a daemon's look back and ahead, while a report over old dates cannot grow it unbounded.
    static let keptStretches = 32

    private static var stretchSeconds: Int { stretchDays * 86_400 }

    /// The offsets of `timeZone`, read when first needed.
    package init(_ timeZone: TimeZone) { self.timeZone = timeZone }

    /// The zone's name (what a schedule prints).
    package var description: String { timeZone.identifier }

    /// A span of instants, from `start` up to the next segment's `start`, during which the
    /// zone's UTC offset is `offset`.
    struct Segment {
        /// The first second (`Int.min` for the first segment of a stretch: it extends into the past).
        let start: Int
        /// Seconds east of UTC.
        let offset: Int
    }

    /// The segments of one stretch, in order; the last one extends into the future.
    struct Stretch {
        /// In order; the first one extends into the past and the last one into the future.
        let segments: [Segment]

        /// The offset at `second`, which lies within the stretch's days or its margin.
        func offset(at second: Int) -> Int {
            segments.last { $0.start <= second }!.offset
        }
    }

    /// The zone's UTC offset in seconds at instant `second` (whole seconds since 1970).
    package func offset(at second: Int) -> Int {
        stretch(containing: second).offset(at: second)
    }

    /// The stretch of `second`: its segments cover at least `second ± margin`.
    func stretch(around second: Int) -> Stretch { stretch(containing: second) }

    /// The local day number (days since 1970-01-01 on the zone's wall clock) at `instant`.
    package func localDay(at instant: Date) -> Int {
        let second = Int(instant.timeIntervalSince1970.rounded(.down))
        let local = second + offset(at: second)
        return local >= 0 ? local / 86_400 : -((-local + 86_399) / 86_400)
    }

    /// The stretch whose own days hold `second`, read from the zone database when not kept.
    private func stretch(containing second: Int) -> Stretch {
        let number = second >= 0 ? second / Self.stretchSeconds : -((-second + Self.stretchSeconds - 1) / Self.stretchSeconds)
        if let kept = stretches.withLock({ $0.first { $0.number == number }?.stretch }) { return kept }
        let read = Self.read(timeZone, from: number * Self.stretchSeconds - Self.margin,
                             through: (number + 1) * Self.stretchSeconds + Self.margin)
        stretches.withLock {
            if $0.count >= Self.keptStretches { $0.removeAll() }
            if !$0.contains(where: { $0.number == number }) { $0.insert((number, read), at: 0) }
        }
        return read
    }

    /// The offsets of `zone` over `lower...upper`, asked of the zone database.
    private static func read(_ zone: TimeZone, from lower: Int, through upper: Int) -> Stretch {
        func asked(at second: Int) -> Int {
            zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(second)))
        }
        var segments: [Segment] = []
        var start = Int.min
        var offset = asked(at: lower)
        var cursor = lower
        // A stretch of 22 days has a handful of transitions at most; the bound only guards
        // against pathological zone data.
        while segments.count < 256,
              let next = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: TimeInterval(cursor))) {
            let transition = Int(next.timeIntervalSince1970.rounded())
            guard transition > cursor, transition <= upper else { break }
            let newOffset = asked(at: transition)
            if newOffset != offset {
                segments.append(Segment(start: start, offset: offset))
                start = transition
                offset = newOffset
            }
            cursor = transition
        }
        segments.append(Segment(start: start, offset: offset))
        return Stretch(segments: segments)
    }
}
