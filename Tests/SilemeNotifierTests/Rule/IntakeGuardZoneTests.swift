import Foundation
import Testing
@testable import Rule
@testable import Values

/// A date is judged only where it is over (docs/intake-hold.md): the intake guard over services
/// whose users live in several zones, at every half hour of a day, with the check-ins that have
/// arrived by then — a day still running somewhere is never an outage, a real one still is.
@Suite("Intake guard across zones")
struct IntakeGuardZoneTests {
    /// A service: users per zone, each checking in once a day at a local hour spread evenly over
    /// the day (user `i` of `n` at `24 × i / n` hours).
    struct Service {
        var users: [String: Int]

        /// The intake as read at `now`: each day's check-ins that have arrived by then, from the 40
        /// days before `now`'s UTC date to the day after; `outage` days had none anywhere.
        func intake(at now: Date, outage: Set<CalendarDate> = []) -> IntakeGuard.Intake {
            let utcToday = CalendarDate(now, in: TimeZone(identifier: "UTC")!)
            var counts: [CalendarDate: [String: Int]] = [:]
            for (name, count) in users {
                let zone = TimeZone(identifier: name)!
                let local = CalendarDate(now, in: zone)
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = zone
                let hour = Double(calendar.component(.hour, from: now)) + Double(calendar.component(.minute, from: now)) / 60
                for offset in -40...1 {
                    let day = utcToday.adding(days: offset)
                    guard !outage.contains(day) else { continue }
                    let arrived = day < local ? count : day == local ? (0..<count).filter { Double(24 * $0) / Double(count) < hour }.count : 0
                    if arrived > 0 { counts[day, default: [:]][name] = arrived }
                }
            }
            return IntakeGuard.Intake(counts: counts, at: now, serviceZone: TimeZone(identifier: "Asia/Shanghai")!)
        }

        /// The gaps the guard finds at `now` among the days a due user of any zone may have missed:
        /// the week before the latest local date anywhere.
        func gaps(at now: Date, outage: Set<CalendarDate> = []) -> [CalendarDate] {
            let last = CalendarDate(now, in: TimeZone(identifier: "Pacific/Kiritimati")!).adding(days: -1)
            return IntakeGuard().gaps(in: last.adding(days: -7)...last, intake: intake(at: now, outage: outage))
        }
    }

    /// Every half hour of 2026-03-10 (UTC), and of a day across a DST change (2026-11-01, Los
    /// Angeles falls back; Auckland is in its summer time).
    static let instants: [Date] = ["2026-03-10T00:00:00Z", "2026-11-01T00:00:00Z"].flatMap { start in
        let first = ISO8601DateFormatter().date(from: start)!
        return (0..<48).map { first.addingTimeInterval(Double($0) * 1800) }
    }

    static let services: [(String, Service)] = [
        ("US-heavy with Auckland", Service(users: ["America/Los_Angeles": 900, "Pacific/Auckland": 100])),
        ("China with Sydney and the Americas", Service(users: ["Asia/Shanghai": 700, "Australia/Sydney": 120,
                                                              "America/New_York": 100, "America/Sao_Paulo": 80])),
        ("Europe with the US west coast", Service(users: ["Europe/London": 500, "Europe/Berlin": 300, "America/Los_Angeles": 200])),
    ]

    @Test("no outage: at no half hour of a day is a date still running somewhere taken for a gap", arguments: 0..<3)
    func noFalseGap(service: Int) {
        let (name, mix) = Self.services[service]
        for now in Self.instants {
            #expect(mix.gaps(at: now).isEmpty, "\(name) at \(now)")
        }
    }

    @Test("the defect as found: counted across zones, Auckland's morning held every due Auckland user")
    func theDefect() {
        let mix = Self.services[0].1
        // 06:00 in Auckland on 2026-03-11 = 17:00 UTC on the 10th: Los Angeles at 10:00 of the
        // 10th, 375 of its 900 users checked in — with Auckland's 100, 475 of the usual 1,000.
        let now = ISO8601DateFormatter().date(from: "2026-03-10T17:00:00Z")!
        let intake = mix.intake(at: now)
        var summed: [CalendarDate: Int] = [:]
        for (day, zones) in intake.counts { summed[day] = zones.values.reduce(0, +) }
        let day = CalendarDate(parsing: "2026-03-10")!
        #expect(IntakeGuard().gaps(in: day...day, intake: summed) == [day])
        #expect(IntakeGuard().gaps(in: day...day, intake: intake).isEmpty)
        // Judged over Auckland alone: its 100 users on the 10th against its own usual 100.
        #expect(intake.zones(over: day) == ["Pacific/Auckland"])
        #expect(intake.judged(day).intake == 100)
        #expect(intake.judged(day).median == 100)
    }

    @Test("a real outage is still a gap, as soon as it is over where enough users live", arguments: 0..<3)
    func realOutage(service: Int) {
        let (name, mix) = Self.services[service]
        let day = CalendarDate(parsing: "2026-03-09")!
        for now in Self.instants {
            let gaps = mix.gaps(at: now, outage: [day])
            let intake = mix.intake(at: now, outage: [day])
            let judged = intake.judged(day)
            // Judged (a median of at least 100 where it is over): a gap; else not judged at all.
            #expect(gaps.contains(day) == (judged.median >= 100), "\(name) at \(now): \(judged)")
            #expect(gaps.allSatisfy { $0 == day }, "\(name) at \(now): \(gaps)")
        }
        // Once the day is over everywhere (two days on), every service sees it.
        #expect(mix.gaps(at: ISO8601DateFormatter().date(from: "2026-03-11T12:00:00Z")!, outage: [day]) == [day])
    }

    @Test("a single-zone service is judged as before: its yesterday is over at its morning")
    func singleZone() {
        let mix = Service(users: ["Asia/Shanghai": 300])
        let now = ISO8601DateFormatter().date(from: "2026-03-10T01:00:00Z")!  // 09:00 in Shanghai
        let intake = mix.intake(at: now)
        var summed: [CalendarDate: Int] = [:]
        for (day, zones) in intake.counts { summed[day] = zones.values.reduce(0, +) }
        let days = CalendarDate(parsing: "2026-03-02")!...CalendarDate(parsing: "2026-03-09")!
        #expect(IntakeGuard().gaps(in: days, intake: intake) == IntakeGuard().gaps(in: days, intake: summed))
        let outage = mix.intake(at: now, outage: [days.upperBound])
        #expect(IntakeGuard().gaps(in: days, intake: outage) == [days.upperBound])
    }

    @Test("a zone key the zone database does not know, or none, counts in the service's zone")
    func unknownZone() {
        let now = ISO8601DateFormatter().date(from: "2026-03-10T01:00:00Z")!
        let day = CalendarDate(parsing: "2026-03-09")!
        let intake = IntakeGuard.Intake(counts: [day: ["": 5, "Mars/Olympus": 3, "America/Los_Angeles": 7]], at: now,
                                        serviceZone: TimeZone(identifier: "Asia/Shanghai")!)
        #expect(intake.today == ["": CalendarDate(parsing: "2026-03-10")!, "Mars/Olympus": CalendarDate(parsing: "2026-03-10")!,
                                 "America/Los_Angeles": day])
        #expect(intake.zones(over: day) == ["", "Mars/Olympus"])
        #expect(intake.intake(of: day, over: intake.zones(over: day)) == 8)
    }
}
