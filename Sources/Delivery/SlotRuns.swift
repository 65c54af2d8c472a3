import Config
import Foundation
import Logging
import Rule
import Store
import Systemd
import Values

/// When a run is: a date for every user (`--date`), or an instant at which each user is on the
/// date of their own latest notify instant (`--at`, the daemon, `--run-now`).
package enum RunWhen: Sendable, Equatable {
    case date(CalendarDate)
    case instant(Date)
}

/// The slots as a run reads them (docs/user-time.md): the slots in the database now, and the run
/// dates of an instant with each one's slots (what `InstantRuns` makes a run of each).
package enum SlotRuns {
    /// The slots now, resolved against `NOTIFY_TIME` in `NOTIFY_TIME_ZONE`. With `logger`, each
    /// zone name the zone database does not know is reported (`unknown_time_zone`, with how many
    /// users have it): those users are served in `NOTIFY_TIME_ZONE`, never skipped.
    package static func read(_ db: PGConnection, configuration: NotifierConfiguration, logger: Logger? = nil) throws -> NotifySlots {
        let slots = try SlotSQL.slots(db, service: configuration.schedule)
        if let logger { try reportUnknownZonesAndTimes(slots, db, configuration: configuration, logger: logger) }
        return slots
    }

    /// Reports what the runs serve otherwise than the app wrote, with how many users: each zone
    /// name of `slots` the zone database does not know and the empty name (served in
    /// `NOTIFY_TIME_ZONE`: `unknown_time_zone`), and each notify time that is not a time of day
    /// (`24:00:00`; served at `NOTIFY_TIME`: `unknown_notify_time`).
    private static func reportUnknownZonesAndTimes(_ slots: NotifySlots, _ db: PGConnection, configuration: NotifierConfiguration,
                                           logger: Logger) throws {
        let zone = configuration.timeZone.identifier
        let odd = slots.unknownZones + slots.unknownTimes
        let users = odd.isEmpty ? [:] : try SlotSQL.users(db, in: odd.map(\.key))
        var byName: [String: Int] = [:]
        for slot in slots.unknownZones { byName[slot.zoneName ?? "", default: 0] += users[slot.key] ?? 0 }
        let empty = try SlotSQL.emptyZoneUsers(db)
        if empty > 0 { byName["", default: 0] += empty }
        for (name, count) in byName.sorted(by: { $0.key < $1.key }) {
            let said = name.isEmpty ? "an empty time zone" : "the time zone \"\(Printable.text(name))\", which the zone database does not know"
            logger.warning("\(count) user(s) have \(said): served in \(zone)",
                           metadata: NotifierEvent.unknownTimeZone.metadata.merging([
                               "time_zone_name": "\(Printable.text(name))", "users": "\(count)",
                           ]) { $1 })
        }
        var byTime: [String: Int] = [:]
        for slot in slots.unknownTimes { byTime[slot.unknownTime ?? "", default: 0] += users[slot.key] ?? 0 }
        for (time, count) in byTime.sorted(by: { $0.key < $1.key }) {
            logger.warning("\(count) user(s) have the notify time \(Printable.text(time)), which is not a time of day: served at \(configuration.schedule.time)",
                           metadata: NotifierEvent.unknownNotifyTime.metadata.merging([
                               "notify_time": "\(Printable.text(time))", "users": "\(count)",
                           ]) { $1 })
        }
    }

    /// The run dates of `when` with the scope of each, latest first: `--date`'s one for everyone,
    /// or an instant's (`NotifySlots.runDates(at:)`). `slots` gives the instant's slots (nil for a date).
    /// `among`: of these slots only (the daemon's, whose instant came). `zone`: of the slots whose
    /// days are counted in that zone only (the dry run's `--zone`; no other messages then).
    /// `known`: the slots as the caller has just read them (the daemon, which decided on them):
    /// not read again.
    package static func runDates(_ when: RunWhen, _ db: PGConnection, configuration: NotifierConfiguration, among: Set<String>? = nil,
                                zone: TimeZone? = nil, known: NotifySlots? = nil, logger: Logger? = nil)
        throws -> (slots: NotifySlots?, dates: [(date: CalendarDate, scope: RunPlan.Scope)]) {
        if case .date(let date) = when, zone == nil { return (nil, [(date, .day)]) }
        let slots: NotifySlots
        if let known {
            slots = known
            if let logger { try reportUnknownZonesAndTimes(known, db, configuration: configuration, logger: logger) }
        } else {
            slots = try read(db, configuration: configuration, logger: logger)
        }
        let inZone = zone.map { Set(slots.keys(countedIn: $0)) }
        switch when {
        case .date(let date):
            return (slots, [(date, RunPlan.Scope(users: nil, kinds: [.alert, .followUp, .reminder], evaluatesRule: true,
                                                 slots: inZone.map { Array($0).sorted() }))])
        case .instant(let instant):
            let keys = inZone.map { among?.intersection($0) ?? $0 } ?? among
            var dates = slots.runDates(at: instant, among: keys).enumerated().map {
                ($1.date, RunPlan.Scope.runDate($1, first: $0 == 0, everyone: among == nil))
            }
            if zone != nil {
                for index in dates.indices {
                    dates[index].1.kinds.subtract(RunPlan.Scope.answers.union([.introduction]))
                    dates[index].1.slots = dates[index].1.slots ?? slots.slots.map(\.key)
                }
            }
            return (slots, dates)
        }
    }

    /// User `userID`'s run date at `when`: the date given, or the date of their own latest notify
    /// instant at or before the instant (the service's for an unknown user: the caller says so).
    package static func runDate(of userID: String, at when: RunWhen, configuration: NotifierConfiguration) throws -> CalendarDate {
        switch when {
        case .date(let date): return date
        case .instant(let instant):
            let db = try PGConnection(configuration.database, \.readURL)
            let key = try SlotSQL.key(db, userID: userID.lowercased()) ?? NotifySlots.serviceKey
            return NotifySlots.Slot(key: key, service: configuration.schedule).schedule.latestFire(atOrBefore: instant).date
        }
    }
}
