import Foundation
import Testing
@testable import Values
@testable import Rule

/// The kept offsets against the zone database itself, in every zone it knows: what a schedule
/// resolves from `ZoneOffsets` must be what `TimeZone` says at that second.
@Suite("ZoneOffsets (one zone's offsets, asked once per stretch)")
struct ZoneOffsetsTests {
    typealias F = ScheduleFixtures

    static let from = Int(F.instant("2026-01-01T00:00:00Z").timeIntervalSince1970)
    static let twoYears = 2 * 365 * 86_400

    private static func asked(_ zone: TimeZone, _ second: Int) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(second)))
    }

    @Test("every zone, hour by hour over two years: the offset secondsFromGMT gives")
    func hourly() {
        #expect(TimeZone.knownTimeZoneIdentifiers.count > 300)
        for identifier in TimeZone.knownTimeZoneIdentifiers {
            let zone = F.zone(identifier)
            let offsets = ZoneOffsets(zone)
            var wrong: [Int] = []
            for second in stride(from: Self.from, to: Self.from + Self.twoYears, by: 3_600)
            where offsets.offset(at: second) != Self.asked(zone, second) {
                wrong.append(second)
            }
            #expect(wrong.isEmpty, "\(identifier): \(wrong.prefix(3))")
        }
    }

    @Test("every zone, at each change of its offset from 2020 to 2040: the second before and the second of it")
    func atTransitions() {
        var transitions = 0
        let end = Date(timeIntervalSince1970: TimeInterval(Self.from + 14 * 365 * 86_400))
        for identifier in TimeZone.knownTimeZoneIdentifiers {
            let zone = F.zone(identifier)
            let offsets = ZoneOffsets(zone)
            var cursor = Date(timeIntervalSince1970: TimeInterval(Self.from - 6 * 365 * 86_400))
            while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next < end {
                let second = Int(next.timeIntervalSince1970.rounded())
                transitions += 1
                #expect(offsets.offset(at: second - 1) == Self.asked(zone, second - 1), "\(identifier) before \(next)")
                #expect(offsets.offset(at: second) == Self.asked(zone, second), "\(identifier) at \(next)")
                cursor = next
            }
        }
        // Dozens of zones change twice a year: the walk must have met thousands of changes.
        #expect(transitions > 2_000)
    }

    @Test("the local date at an instant is the calendar's, fractions of a second and far zones included",
          arguments: ["Asia/Shanghai", "America/Los_Angeles", "Europe/London", "Asia/Kolkata", "Pacific/Chatham",
                      "Pacific/Kiritimati", "Pacific/Pago_Pago", "Australia/Lord_Howe", "America/St_Johns"])
    func localDate(identifier: String) {
        let zone = F.zone(identifier)
        let schedule = DailySchedule(time: TimeOfDay(hour: 9, minute: 0), timeZone: zone)
        for second in stride(from: Self.from, to: Self.from + Self.twoYears, by: 7 * 3_600 + 13 * 60 + 7) {
            for instant in [Date(timeIntervalSince1970: TimeInterval(second)), Date(timeIntervalSince1970: TimeInterval(second) - 0.25)] {
                #expect(schedule.runDate(at: instant) == CalendarDate(instant, in: zone), "\(identifier) \(instant)")
            }
        }
        // Before 1970 too (negative seconds round down, not toward zero).
        let early = F.instant("1969-12-31T23:59:59Z").addingTimeInterval(0.5)
        #expect(DailySchedule(time: TimeOfDay(hour: 9, minute: 0), timeZone: F.zone("UTC")).runDate(at: early) == F.date("1969-12-31"))
    }

    @Test("the times of one zone share its offsets; equal schedules compare equal whatever each has kept")
    func shared() {
        let service = F.schedule("09:00", "Asia/Shanghai")
        let slots = NotifySlots(keys: ["Europe/London|07:00:00", "Europe/London|20:00:00", "Europe/London|", "|21:00:00", "Mars/Base|"],
                                service: service)
        let london = slots.slots.filter { $0.zoneName == "Europe/London" }.map(\.schedule.offsets)
        #expect(london.count == 3 && london.allSatisfy { $0 === london[0] })
        // The service's zone (no name, or an unknown one) is the service's own offsets.
        let inService = slots.slots.filter { $0.zoneName == nil || $0.unknownZone }.map(\.schedule.offsets)
        #expect(inService.count == 2 && inService.allSatisfy { $0 === service.offsets })
        _ = london[0].offset(at: Self.from)
        let seven = slots.slots.first { $0.key == "Europe/London|07:00:00" }
        #expect(seven?.schedule == F.schedule("07:00", "Europe/London"))
        #expect(seven?.schedule != F.schedule("07:00", "Europe/Dublin"))
    }
}
