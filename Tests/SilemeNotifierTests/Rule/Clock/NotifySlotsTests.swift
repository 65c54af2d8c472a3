import Foundation
import Testing
@testable import Values
@testable import Rule

/// The slots, pure: slot keys as SQL writes them, resolved against the service's
/// 09:00 Asia/Shanghai, and the run dates of an instant.
@Suite("Slots (NotifySlots)")
struct NotifySlotsTests {
    typealias F = ScheduleFixtures
    static let service = F.schedule("09:00", "Asia/Shanghai")

    @Test("a key reads as zone and time; NULLs are the service's; a fraction of a second is dropped")
    func keys() {
        let slot = NotifySlots.Slot(key: "America/Los_Angeles|20:30:00", service: Self.service)
        #expect(slot.zoneName == "America/Los_Angeles" && slot.notifyTime == TimeOfDay(hour: 20, minute: 30))
        #expect(slot.schedule == F.schedule("20:30", "America/Los_Angeles") && !slot.unknownZone)
        #expect(NotifySlots.Slot(key: "|", service: Self.service).schedule == Self.service)
        #expect(NotifySlots.Slot(key: "|07:15:00", service: Self.service).schedule == F.schedule("07:15", "Asia/Shanghai"))
        #expect(NotifySlots.Slot(key: "Europe/London|", service: Self.service).schedule == F.schedule("09:00", "Europe/London"))
        #expect(NotifySlots.Slot(key: "|07:15:30.25", service: Self.service).notifyTime == TimeOfDay(hour: 7, minute: 15, second: 30))
    }

    @Test("an unknown zone name is served in the service's zone, at the user's own time, and said", arguments: [
        "Mars/Olympus_Mons", "asia shanghai", " Asia/Shanghai", "Asia/Shanghai\n",
    ])
    func unknownZone(name: String) {
        let slot = NotifySlots.Slot(key: "\(name)|21:00:00", service: Self.service)
        #expect(slot.unknownZone && slot.zoneName == name)
        #expect(slot.schedule == F.schedule("21:00", "Asia/Shanghai"))
        #expect(NotifySlots(keys: ["\(name)|21:00:00", "|"], service: Self.service).unknownZones == [slot])
    }

    @Test("a fixed-offset name (as phones report them) is served at that offset all year, and said; a zone database name is not", arguments: [
        ("GMT+05:30", 19_800), ("UTC+8", 28_800), ("GMT-03:00", -10_800), ("UTC-8", -28_800),
    ])
    func fixedOffset(name: String, seconds: Int) {
        let slot = NotifySlots.Slot(key: "\(name)|08:00:00", service: Self.service)
        #expect(slot.fixedOffsetZone && !slot.unknownZone && slot.zoneName == name)
        #expect(slot.schedule.timeZone.secondsFromGMT(for: F.instant("2026-07-01T00:00:00Z")) == seconds)
        #expect(slot.schedule.timeZone.secondsFromGMT(for: F.instant("2026-01-01T00:00:00Z")) == seconds)
        for zone in ["Asia/Kolkata", "Etc/GMT+5", "UTC", "GMT", "Etc/UTC", "America/St_Johns"] {
            #expect(!NotifySlots.Slot(key: "\(zone)|08:00:00", service: Self.service).fixedOffsetZone, "\(zone)")
        }
    }

    @Test("a notify time that is not a time of day (24:00, which PostgreSQL accepts) is served at NOTIFY_TIME, and said")
    func unknownTime() {
        let slot = NotifySlots.Slot(key: "Europe/London|24:00:00", service: Self.service)
        #expect(slot.unknownTime == "24:00:00" && slot.notifyTime == nil && !slot.unknownZone)
        #expect(slot.schedule == F.schedule("09:00", "Europe/London"))
        let slots = NotifySlots(keys: ["Europe/London|24:00:00", "|", "|07:00:00"], service: Self.service)
        #expect(slots.unknownTimes == [slot])
        #expect(NotifySlots.Slot(key: "|23:59:59", service: Self.service).unknownTime == nil)
    }

    @Test("with no users at all, the service's own slot")
    func empty() {
        let slots = NotifySlots(keys: [], service: Self.service)
        #expect(slots.slots.map(\.key) == ["|"])
        #expect(slots.nextFire(after: F.instant("2026-01-13T00:00:00Z")).instant == F.instant("2026-01-13T01:00:00Z"))
    }

    /// The zones at their default 09:00, and their run dates at 09:00 Shanghai on the 13th
    /// (01:00Z): east of the date line's west side already on the 13th, west of Shanghai's 09:00 still on the 12th.
    @Test("the run dates at one instant, zone by zone", arguments: [
        ("Asia/Shanghai", "2026-01-13"),       // 09:00: its instant
        ("America/Los_Angeles", "2026-01-12"), // 17:00 on the 12th
        ("Europe/London", "2026-01-12"),       // 01:00 on the 13th, before 09:00
        ("Asia/Kolkata", "2026-01-12"),        // 06:30 on the 13th
        ("Pacific/Chatham", "2026-01-13"),     // 14:45 on the 13th (+13:45)
        ("Pacific/Kiritimati", "2026-01-13"),  // 15:00 on the 13th (+14)
    ])
    func runDatesByZone(zone: String, expected: String) {
        let slots = NotifySlots(keys: ["\(zone)|"], service: Self.service)
        let dates = slots.runDates(at: F.instant("2026-01-13T01:00:00Z"))
        #expect(dates.map(\.date) == [F.date(expected)])
        #expect(dates[0].everyone && dates[0].keys == nil)
    }

    @Test("slots on different dates are grouped, latest date first, each with its keys; among limits them")
    func grouped() {
        let slots = NotifySlots(keys: ["|", "America/Los_Angeles|", "Asia/Kolkata|06:00:00"], service: Self.service)
        let dates = slots.runDates(at: F.instant("2026-01-13T01:00:00Z"))
        #expect(dates.map(\.date) == [F.date("2026-01-13"), F.date("2026-01-12")])
        // Kolkata at 06:00 (00:30Z) has come: the 13th, with the service's users.
        #expect(dates[0].keys == ["Asia/Kolkata|06:00:00", "|"])
        #expect(dates[1].keys == ["America/Los_Angeles|"])
        let among = slots.runDates(at: F.instant("2026-01-13T01:00:00Z"), among: ["|"])
        #expect(among.count == 1 && among[0].keys == ["|"] && !among[0].everyone)
    }

    @Test("the slots are the same as another read's only for the same keys and the same service's time")
    func sameAs() {
        let keys = ["|", "America/Los_Angeles|", "Asia/Kolkata|06:00:00"]
        let slots = NotifySlots(keys: keys, service: Self.service)
        #expect(slots.sameAs(keys: keys, service: F.schedule("09:00", "Asia/Shanghai")))
        #expect(!slots.sameAs(keys: keys, service: F.schedule("09:30", "Asia/Shanghai")))
        #expect(!slots.sameAs(keys: keys, service: F.schedule("09:00", "Asia/Tokyo")))
        #expect(!slots.sameAs(keys: Array(keys.dropLast()), service: Self.service))
        #expect(!slots.sameAs(keys: keys.dropLast() + ["Asia/Kolkata|06:30:00"], service: Self.service))
        #expect(NotifySlots(keys: [], service: Self.service).sameAs(keys: [], service: Self.service))
    }

    @Test("the next instant of any slot, and whose it is")
    func nextFire() {
        let slots = NotifySlots(keys: ["|", "America/Los_Angeles|", "Asia/Shanghai|20:00:00"], service: Self.service)
        let next = slots.nextFire(after: F.instant("2026-01-13T01:00:00Z"))
        #expect(next.instant == F.instant("2026-01-13T12:00:00Z") && next.slots.map(\.key) == ["Asia/Shanghai|20:00:00"])
        // Two slots at one instant: both.
        let same = NotifySlots(keys: ["|", "Asia/Hong_Kong|"], service: Self.service).nextFire(after: F.instant("2026-01-13T00:00:00Z"))
        #expect(same.slots.count == 2)
    }

    @Test("across DST: Los Angeles' 09:00 is 17:00Z in winter and 16:00Z in summer; London's 01:30 is skipped once and repeated once")
    func acrossDST() {
        let la = NotifySlots(keys: ["America/Los_Angeles|"], service: Self.service)
        #expect(la.runDates(at: F.instant("2026-03-07T16:59:59Z")).map(\.date) == [F.date("2026-03-06")])
        #expect(la.runDates(at: F.instant("2026-03-07T17:00:00Z")).map(\.date) == [F.date("2026-03-07")])
        #expect(la.runDates(at: F.instant("2026-03-09T15:59:59Z")).map(\.date) == [F.date("2026-03-08")])
        #expect(la.runDates(at: F.instant("2026-03-09T16:00:00Z")).map(\.date) == [F.date("2026-03-09")])
        let london = NotifySlots(keys: ["Europe/London|01:30:00"], service: Self.service)
        // Skipped on 2026-03-29: the first instant after the gap, 02:00 BST = 01:00Z.
        #expect(london.runDates(at: F.instant("2026-03-29T00:59:59Z")).map(\.date) == [F.date("2026-03-28")])
        #expect(london.runDates(at: F.instant("2026-03-29T01:00:00Z")).map(\.date) == [F.date("2026-03-29")])
        // Repeated on 2026-10-25: the first, 01:30 BST = 00:30Z; the second (01:30Z) changes nothing.
        #expect(london.runDates(at: F.instant("2026-10-25T00:30:00Z")).map(\.date) == [F.date("2026-10-25")])
        #expect(london.nextFire(after: F.instant("2026-10-25T00:30:00Z")).instant == F.instant("2026-10-26T01:30:00Z"))
    }
}
