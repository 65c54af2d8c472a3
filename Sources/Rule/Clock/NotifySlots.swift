import Foundation
import Values

/// The slots (docs/user-time.md): the users grouped by the zone and notify time the app wrote for
/// them — a **slot**: the zone and notify time a group of users share — each resolved to the
/// schedule it follows. A user's run date
/// at an instant is the date of their slot's latest notify instant at or before it; a run at that
/// instant serves each run date with the slots on it. Pure: the store reads the slots, the runs
/// and the daemon act on what this says.
package struct NotifySlots: Sendable, Equatable {
    /// One slot: the users whose `time_zone` and `notify_time` read the same.
    package struct Slot: Sendable, Equatable {
        /// The slot's key as SQL computes it from a user row: `zone|HH:MM:SS`, `''` for NULL
        /// (`SlotSQL.key`). Runs filter their users by it.
        package let key: String
        /// The zone name the app wrote, if any (known or not).
        package let zoneName: String?
        /// The notify time the app wrote, if any.
        package let notifyTime: TimeOfDay?
        /// When the slot's users are served: their zone (or `NOTIFY_TIME_ZONE` when none, or
        /// when the name is unknown) and their time (or `NOTIFY_TIME`).
        package let schedule: DailySchedule
        /// The zone name is set and the zone database does not know it: the users are served in
        /// `NOTIFY_TIME_ZONE` — never skipped — and the runs say so.
        package let unknownZone: Bool
        /// The zone name is not a zone database name but a fixed offset the zone database reads
        /// (`GMT+05:30`, `UTC+8`: phones report such names): served at that offset all year,
        /// and the dry run says so.
        package let fixedOffsetZone: Bool
        /// The notify time text as the database wrote it when it is not a time of day
        /// (`24:00:00`, which PostgreSQL accepts): the users are served at `NOTIFY_TIME`, and the
        /// runs say so.
        package let unknownTime: String?

        /// The slot of key `key` (as `SlotSQL.key` reads it), resolved against the service's own
        /// schedule `service`.
        package init(key: String, service: DailySchedule) {
            var reader = Reader(service: service)
            self = reader.slot(key)
        }

        init(key: String, zoneName: String?, notifyTime: TimeOfDay?, schedule: DailySchedule, unknownZone: Bool,
             fixedOffsetZone: Bool = false, unknownTime: String? = nil) {
            self.key = key
            self.zoneName = zoneName
            self.notifyTime = notifyTime
            self.schedule = schedule
            self.unknownZone = unknownZone
            self.fixedOffsetZone = fixedOffsetZone
            self.unknownTime = unknownTime
        }

        /// Reads keys into slots, each zone name and time text once: a million users have a few
        /// dozen zones and a hundred-odd times in thousands of combinations, and the slots of one
        /// zone share its `ZoneOffsets` (the zone database is asked once per zone).
        struct Reader {
            let service: DailySchedule
            private var zones: [Substring: ZoneOffsets?] = [:]
            private var times: [Substring: TimeOfDay?] = [:]

            init(service: DailySchedule) { self.service = service }

            mutating func slot(_ key: String) -> Slot {
                let bar = key.firstIndex(of: "|") ?? key.endIndex
                let name = key[..<bar]
                let text = bar < key.endIndex ? key[key.index(after: bar)...] : ""
                let offsets = name.isEmpty ? nil : zone(name)
                let time = text.isEmpty ? nil : self.time(text)
                return Slot(key: key, zoneName: name.isEmpty ? nil : String(name), notifyTime: time,
                            schedule: DailySchedule(time: time ?? service.time, offsets: offsets ?? service.offsets),
                            unknownZone: !name.isEmpty && offsets == nil,
                            fixedOffsetZone: offsets.map { Slot.isFixedOffset($0.timeZone) } ?? false,
                            unknownTime: !text.isEmpty && time == nil ? String(text) : nil)
            }

            private mutating func zone(_ name: Substring) -> ZoneOffsets? {
                if let known = zones[name] { return known }
                let read = Slot.zone(named: String(name)).map(ZoneOffsets.init)
                zones[name] = read
                return read
            }

            // PostgreSQL writes a time as HH:MM:SS, with a fraction when it has one: whole seconds count.
            private mutating func time(_ text: Substring) -> TimeOfDay? {
                if let known = times[text] { return known }
                let read = TimeOfDay(parsing: String(text.prefix { $0 != "." }))
                times[text] = read
                return read
            }
        }

        /// Whether the zone database made `zone` from a fixed offset in its name (it names such a
        /// zone `GMT+HHMM` or `GMT-HHMM`) rather than from a zone of its own.
        static func isFixedOffset(_ zone: TimeZone) -> Bool {
            let name = zone.identifier
            return name.count > 3 && name.hasPrefix("GMT") && (name.dropFirst(3).first == "+" || name.dropFirst(3).first == "-")
        }

        /// The zone the database knows by `name` (an IANA name; nil for anything else).
        static func zone(named name: String) -> TimeZone? {
            guard !name.isEmpty, name.allSatisfy({ !$0.isWhitespace }) else { return nil }
            return TimeZone(identifier: name)
        }
    }

    /// The run dates at one instant, each with the slots whose users it serves.
    package struct RunDate: Sendable, Equatable {
        /// `D_u` of the slots' users.
        package let date: CalendarDate
        /// The slots, in key order.
        package let slots: [Slot]
        /// Every slot is on this date: a run need not filter its users by slot.
        package let everyone: Bool
        /// The keys of the slots, or nil when the run date serves everyone (no filter).
        package var keys: [String]? { everyone ? nil : slots.map(\.key) }
    }

    /// The slots, in key order.
    package let slots: [Slot]
    /// The service's schedule (`NOTIFY_TIME` in `NOTIFY_TIME_ZONE`): of the users with neither set.
    package let service: DailySchedule

    /// The keys as given (`SlotSQL.keys`' order): `sameAs(keys:service:)` compares them.
    private let given: [String]

    /// The slots of `keys` (each once), resolved against `service`. With no users at all, the
    /// service's own slot, so that a run and the daemon still have a date and an instant.
    package init(keys: [String], service: DailySchedule) {
        self.service = service
        given = keys
        var reader = Slot.Reader(service: service)
        slots = Set(keys.isEmpty ? [Self.serviceKey] : keys).sorted().map { reader.slot($0) }
    }

    /// These are the slots of `keys` resolved against `service`, as `init(keys:service:)` would
    /// make them: the daemon, reading the keys again after a change that left them the same (a
    /// user moved to a time others already have), keeps these and the zone lookups they made
    /// instead of resolving thousands of keys again.
    package func sameAs(keys: [String], service: DailySchedule) -> Bool {
        given == keys && self.service == service
    }

    /// The key of the users with neither a zone nor a time.
    package static let serviceKey = "|"

    /// The run dates at `instant`: each slot's latest notify instant at or before it, grouped by
    /// date, latest date first — of the slots `among` only, when given (the daemon serves the
    /// slots whose instant came).
    package func runDates(at instant: Date, among keys: Set<String>? = nil) -> [RunDate] {
        var byDate: [CalendarDate: [Slot]] = [:]
        for slot in slots where keys?.contains(slot.key) ?? true {
            byDate[slot.schedule.latestFire(atOrBefore: instant).date, default: []].append(slot)
        }
        return byDate.keys.sorted(by: >).map { RunDate(date: $0, slots: byDate[$0]!, everyone: byDate[$0]!.count == slots.count) }
    }

    /// The slots with their latest notify instant at or before `instant` (the date it is for).
    package func latestFires(atOrBefore instant: Date) -> [(slot: Slot, date: CalendarDate, instant: Date)] {
        slots.map { slot in
            let fire = slot.schedule.latestFire(atOrBefore: instant)
            return (slot, fire.date, fire.instant)
        }
    }

    /// The first notify instant of any slot strictly after `instant`, and the slots whose instant it is.
    package func nextFire(after instant: Date) -> (instant: Date, slots: [Slot]) {
        let fires = slots.map { ($0, $0.schedule.nextFire(after: instant).instant) }
        let first = fires.map(\.1).min()!
        return (first, fires.filter { $0.1 == first }.map(\.0))
    }

    /// The keys of the slots whose users' days are counted in `zone` (an unknown name's users are
    /// counted in the service's zone): what `--zone` keeps.
    package func keys(countedIn zone: TimeZone) -> [String] {
        slots.filter { $0.schedule.timeZone.identifier == zone.identifier }.map(\.key)
    }

    /// The slots whose zone name is unknown (their users are served in the service's zone).
    package var unknownZones: [Slot] { slots.filter(\.unknownZone) }

    /// The slots whose notify time is not a time of day (their users are served at `NOTIFY_TIME`).
    package var unknownTimes: [Slot] { slots.filter { $0.unknownTime != nil } }
}
