import Foundation
import Testing
@testable import Values
import Rule
import Store

/// Each user's own time (docs/user-time.md) on real servers: `users.time_zone` and
/// `users.notify_time`, each user alerted at their own notify instant and not before — by
/// `--run-now --at` at chosen instants (through DST in London and Los Angeles), and by the daemon
/// on the wall clock (two of them, downtime, a user who moves).
@Suite("Each user's own time, on real servers", .enabled(if: TestEnvironment.enabled))
struct UserTimeIntegrationTests {
    /// One user of a test: their zone and time as the app writes them, and the instant their alert
    /// is due (the notify instant of the date with `m = 2`).
    struct Person {
        let local: String
        let zone: String?
        let time: String?
        let due: String
    }

    /// Adds `person` with `L` = `lastCheckIn` and their zone and time.
    static func add(_ db: TestDatabase, _ mail: Mailbox, _ person: Person, lastCheckIn: String) throws -> String {
        let id = try db.addUser(name: person.local, email: mail.address(person.local), checkIns: [lastCheckIn])
        try db.query("UPDATE users SET time_zone = $2, notify_time = $3::time WHERE id = $1", [id, person.zone, person.time])
        return id
    }

    static func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    static func mailed(_ mail: Mailbox) throws -> Set<String> {
        Set(try mail.deliveries().map { String($0.recipient.prefix { $0 != "@" }) })
    }

    /// The six zones of the issue, with and without their own times; `L` = 2026-01-10 for all, so
    /// each is due on their own 2026-01-13 at their own instant (and not a second before).
    static let world: [Person] = [
        Person(local: "shanghai", zone: nil, time: nil, due: "2026-01-13T01:00:00Z"),
        Person(local: "shanghai20", zone: "Asia/Shanghai", time: "20:00", due: "2026-01-13T12:00:00Z"),
        Person(local: "losangeles", zone: "America/Los_Angeles", time: nil, due: "2026-01-13T17:00:00Z"),
        Person(local: "losangeles7", zone: "America/Los_Angeles", time: "07:00", due: "2026-01-13T15:00:00Z"),
        Person(local: "london", zone: "Europe/London", time: nil, due: "2026-01-13T09:00:00Z"),
        Person(local: "kolkata", zone: "Asia/Kolkata", time: "21:15", due: "2026-01-13T15:45:00Z"),
        Person(local: "chatham", zone: "Pacific/Chatham", time: nil, due: "2026-01-12T19:15:00Z"),
        Person(local: "kiritimati", zone: "Pacific/Kiritimati", time: "06:00", due: "2026-01-12T16:00:00Z"),
        // Not a zone: served in NOTIFY_TIME_ZONE at their own time, never skipped.
        Person(local: "mars", zone: "Mars/Olympus_Mons", time: "10:00", due: "2026-01-13T02:00:00Z"),
    ]

    @Test("odd zones and times are served and said: an empty time_zone in NOTIFY_TIME_ZONE, a fixed offset at that offset, notify_time 24:00 at NOTIFY_TIME; --at in lower case")
    func oddZonesAndTimes() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let odd = [
            Person(local: "empty", zone: "", time: nil, due: "2026-01-13T01:00:00Z"),
            Person(local: "utc8", zone: "UTC+8", time: "07:00", due: "2026-01-12T23:00:00Z"),
            Person(local: "kolkatafixed", zone: "GMT+05:30", time: "08:00", due: "2026-01-13T02:30:00Z"),
            Person(local: "midnight", zone: "Europe/London", time: "24:00", due: "2026-01-13T09:00:00Z"),
        ]
        var ids: [String: String] = [:]
        for person in odd { ids[person.local] = try Self.add(db, mail, person, lastCheckIn: "2026-01-10") }
        #expect(try db.query("SELECT notify_time::text FROM users WHERE id = $1", [ids["midnight"]!]).first?.first == "24:00:00")
        let env = try NotifierProcess.environment(database: db)
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--at", "2026-01-13t10:00:00z", "--format", "json"], environment: env)
        #expect(dry.status == 0, "lower-case t and z are RFC 3339: \(dry.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any]
        #expect(object?["empty_time_zone_users"] as? Int == 1, "\(dry.stdout.prefix(300))")
        let rows = Dictionary(uniqueKeysWithValues: ((object?["users"] as? [[String: Any]]) ?? []).compactMap { row in
            (row["name"] as? String).map { ($0, row) }
        })
        #expect(rows["utc8"]?["fixed_offset_time_zone"] as? String == "UTC+8" && rows["utc8"]?["time_zone"] as? String == "GMT+0800")
        #expect(rows["kolkatafixed"]?["fixed_offset_time_zone"] as? String == "GMT+05:30")
        #expect(rows["midnight"]?["unknown_notify_time"] as? String == "24:00:00" && rows["midnight"]?["served_at"] as? String == "09:00")
        #expect(rows["empty"]?["time_zone"] as? String == "Asia/Shanghai" && rows["empty"]?["unknown_time_zone"] == nil)
        let table = try NotifierProcess.run(["--run-now", "--dry-run", "--at", "2026-01-13T10:00:00Z"], environment: env)
        #expect(table.stdout.contains("Note: 1 user(s) have an empty time_zone: served in Asia/Shanghai"), "\(table.stdout)")
        #expect(table.stdout.contains("fixed-offset time zone \"UTC+8\": served at that offset all year"))
        #expect(table.stdout.contains("notify time 24:00:00 is not a time of day: served at 09:00"))
        // Each is alerted at their own (served) instant and not a second before.
        var expected = Set<String>()
        for person in odd.sorted(by: { $0.due < $1.due }) {
            let due = Self.instant(person.due)
            #expect(try NotifierProcess.run(["--run-now", "--at", ISO8601DateFormatter().string(from: due - 1)], environment: env).status == 0)
            #expect(try Self.mailed(mail) == expected, "a second before \(person.local)'s instant")
            let run = try NotifierProcess.run(["--run-now", "--at", person.due], environment: env)
            expected.insert(person.local)
            #expect(try Self.mailed(mail) == expected, "at \(person.local)'s instant \(person.due)")
            // The run's journal (stderr here, or the journal) says what it served otherwise.
            let logged = TestEnvironment.current?.journal == true
                ? try JournalReader.entries(of: run).compactMap { $0["MESSAGE"] }.joined(separator: "\n") + run.stderr
                : run.stderr
            #expect(logged.contains("1 user(s) have an empty time zone: served in Asia/Shanghai"), "\(logged.suffix(600))")
            #expect(logged.contains("1 user(s) have the notify time 24:00:00, which is not a time of day: served at 09:00"))
        }
    }

    @Test("users in six zones, with and without their own times: each alerted at their own instant and not a second before")
    func sixZones() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        var ids: [String: String] = [:]
        for person in Self.world { ids[person.local] = try Self.add(db, mail, person, lastCheckIn: "2026-01-10") }
        let env = try NotifierProcess.environment(database: db)
        // --preview at an instant: the user's own run date (Los Angeles is still on the 12th at 09:00Z).
        for (at, date) in [("2026-01-13T09:00:00Z", "2026-01-12"), ("2026-01-13T17:00:00Z", "2026-01-13")] {
            let preview = try NotifierProcess.run(["--run-now", "--dry-run", "--at", at, "--preview", ids["losangeles"]!], environment: env)
            #expect(preview.status == 0 && preview.stderr.contains("preview for \(ids["losangeles"]!) on \(date):"), "\(preview.stderr)")
        }
        var expected = Set<String>()
        for person in Self.world.sorted(by: { $0.due < $1.due }) {
            let due = Self.instant(person.due)
            let before = try NotifierProcess.run(["--run-now", "--at", ISO8601DateFormatter().string(from: due - 1)], environment: env)
            #expect(before.status == 0, "\(before.stderr)")
            #expect(try Self.mailed(mail) == expected, "a second before \(person.local)'s instant")
            let at = try NotifierProcess.run(["--run-now", "--at", person.due], environment: env)
            #expect(at.status == 0, "\(at.stderr)")
            expected.insert(person.local)
            #expect(try Self.mailed(mail) == expected, "at \(person.local)'s instant \(person.due)")
        }
        // Each alert once, on the user's own 13th, with m = 2.
        let rows = try db.query("""
            SELECT u.name, n.notification_date::text, n.consecutive_miss_days::text FROM notification_logs n JOIN users u ON u.id = n.user_id
            WHERE n.email_sent ORDER BY u.name
            """)
        #expect(rows == Self.world.map(\.local).sorted().map { [$0, "2026-01-13", "2"] })
        // The unknown zone is said in the journal of the runs (stderr here) and in the dry run.
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--at", "2026-01-13T02:00:00Z", "--format", "json"], environment: env)
        let object = try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any]
        let users = object?["users"] as? [[String: Any]] ?? []
        let mars = users.first { ($0["name"] as? String) == "mars" }
        #expect(mars?["time_zone"] as? String == "Asia/Shanghai" && mars?["unknown_time_zone"] as? String == "Mars/Olympus_Mons",
                "\(String(describing: mars))")
        #expect(mars?["run_date"] as? String == "2026-01-13")
        // A day later, at 02:00Z, the users are on two run dates (planned side by side): the later
        // run date's rows first, each user on their own date.
        let later = try NotifierProcess.run(["--run-now", "--dry-run", "--at", "2026-01-14T02:00:00Z", "--format", "json"], environment: env)
        let laterRows = ((try JSONSerialization.jsonObject(with: Data(later.stdout.utf8)) as? [String: Any])?["users"] as? [[String: Any]]) ?? []
        #expect(laterRows.compactMap { $0["run_date"] as? String } == Array(repeating: "2026-01-14", count: 4) + Array(repeating: "2026-01-13", count: 5),
                "\(later.stdout) \(later.stderr)")
        func names(on date: String) -> Set<String> {
            Set(laterRows.filter { $0["run_date"] as? String == date }.compactMap { $0["name"] as? String })
        }
        #expect(names(on: "2026-01-14") == ["shanghai", "chatham", "kiritimati", "mars"])
        #expect(names(on: "2026-01-13") == ["shanghai20", "losangeles", "losangeles7", "london", "kolkata"])
        // --zone: only the users counted in that zone (the unknown zone's user is counted in Shanghai's).
        func listed(_ zone: String, _ when: [String]) throws -> [String] {
            let result = try NotifierProcess.run(["--run-now", "--dry-run", "--format", "json", "--zone", zone] + when, environment: env)
            #expect(result.status == 0, "\(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return ((object?["users"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }.sorted()
        }
        #expect(try listed("America/Los_Angeles", ["--at", "2026-01-13T18:00:00Z"]) == ["losangeles", "losangeles7"])
        #expect(try listed("Asia/Shanghai", ["--at", "2026-01-13T18:00:00Z"]) == ["mars", "shanghai", "shanghai20"])
        #expect(try listed("Europe/London", ["--date", "2026-01-13"]) == ["london"])
        #expect(try listed("Europe/Paris", ["--date", "2026-01-13"]) == [])
        #expect(try NotifierProcess.run(["--run-now", "--dry-run", "--zone", "Mars/Base"], environment: env).status == 64)
        #expect(try NotifierProcess.run(["--run-now", "--zone", "Europe/London"], environment: env).status == 64)
        // The history report of the users counted in one zone: their mails, and the runs that served them.
        func reported(_ zone: String?) throws -> (sent: Int?, runs: Int?) {
            let result = try NotifierProcess.run(["report", "--from", "2026-01-12", "--to", "2026-01-13", "--format", "json"]
                                                 + (zone.map { ["--zone", $0] } ?? []), environment: env)
            #expect(result.status == 0, "\(result.stderr)")
            let summary = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["summary"] as? [String: Any]
            return (summary?["sent"] as? Int, summary?["runs"] as? Int)
        }
        let all = try reported(nil)
        #expect(all.sent == Self.world.count)
        #expect(try reported("Asia/Shanghai").sent == 3, "shanghai, shanghai20 and mars")
        let losAngeles = try reported("America/Los_Angeles")
        #expect(losAngeles.sent == 2, "losangeles and losangeles7")
        // The runs that served Los Angeles' times: some, not every run of those days.
        #expect((losAngeles.runs ?? 0) > 0 && (losAngeles.runs ?? 0) < (all.runs ?? 0), "\(losAngeles) of \(all)")
        #expect(try reported("Europe/Paris").sent == 0)
        #expect(try NotifierProcess.run(["report", "--zone", "Mars/Base"], environment: env).status == 64)
        let run = try NotifierProcess.run(["--run-now", "--at", "2026-01-13T02:00:00Z"], environment: env)
        #expect(run.stderr.contains("the time zone \"Mars/Olympus_Mons\", which the zone database does not know: served in Asia/Shanghai"),
                "\(run.stderr)")
    }

    @Test("through DST both ways: London's 01:30 skipped (02:00 BST) and repeated (the first), Los Angeles' 02:30 skipped and 01:30 repeated")
    func daylightSaving() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // (person, L): due on the transition day at the instant the rule gives.
        let cases: [(Person, String)] = [
            (Person(local: "london.spring", zone: "Europe/London", time: "01:30", due: "2026-03-29T01:00:00Z"), "2026-03-26"),
            (Person(local: "london.autumn", zone: "Europe/London", time: "01:30", due: "2026-10-25T00:30:00Z"), "2026-10-22"),
            (Person(local: "la.spring", zone: "America/Los_Angeles", time: "02:30", due: "2026-03-08T10:00:00Z"), "2026-03-05"),
            (Person(local: "la.autumn", zone: "America/Los_Angeles", time: "01:30", due: "2026-11-01T08:30:00Z"), "2026-10-29"),
            // Los Angeles at the default 09:00 the day after each change: 17:00Z in winter time, 16:00Z in summer time.
            (Person(local: "la.summer", zone: "America/Los_Angeles", time: nil, due: "2026-03-09T16:00:00Z"), "2026-03-06"),
            (Person(local: "la.winter", zone: "America/Los_Angeles", time: nil, due: "2026-11-02T17:00:00Z"), "2026-10-30"),
        ]
        for (person, last) in cases { _ = try Self.add(db, mail, person, lastCheckIn: last) }
        let env = try NotifierProcess.environment(database: db)
        var expected = Set<String>()
        for (person, _) in cases.sorted(by: { $0.0.due < $1.0.due }) {
            let due = Self.instant(person.due)
            #expect(try NotifierProcess.run(["--run-now", "--at", ISO8601DateFormatter().string(from: due - 1)], environment: env).status == 0)
            #expect(try Self.mailed(mail) == expected, "a second before \(person.local)'s instant")
            #expect(try NotifierProcess.run(["--run-now", "--at", person.due], environment: env).status == 0)
            expected.insert(person.local)
            #expect(try Self.mailed(mail) == expected, "at \(person.local)'s instant \(person.due)")
        }
        // The repeated hour's second 01:30 sends nothing again.
        #expect(try NotifierProcess.run(["--run-now", "--at", "2026-11-01T09:30:00Z"], environment: env).status == 0)
        #expect(try mail.deliveries().count == cases.count)
    }

    @Test("the summary keeps each user's slot key: at the first check-in, queued or folded, and when the app changes it")
    func summaryKeepsTheSlot() throws {
        let db = try TestDatabase()
        let id = try db.addUser(name: "甲", email: "a@example.com")
        try db.query("UPDATE users SET time_zone = 'Asia/Kolkata', notify_time = '21:15' WHERE id = $1", [id])
        try db.checkIn(id, "2026-01-10")
        let env = try NotifierProcess.environment(database: db)
        // Still queued: the dry run of the slot's users lists them (the overlay reads their time from users).
        let queued = try NotifierProcess.run(["--run-now", "--dry-run", "--format", "json", "--zone", "Asia/Kolkata",
                                              "--date", "2026-01-13"], environment: env)
        #expect(queued.stdout.contains(id), "\(queued.stdout)\(queued.stderr)")
        #expect(try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13"], environment: env).status == 0)
        try db.query("SELECT sileme.sileme_fold_check_ins()")
        func slot() throws -> String? { try db.query("SELECT slot FROM sileme.user_last_check_in WHERE user_id = $1", [id]).first?.first ?? nil }
        #expect(try slot() == "Asia/Kolkata|21:15:00")
        try db.query("UPDATE users SET notify_time = NULL WHERE id = $1", [id])
        #expect(try slot() == "Asia/Kolkata|")
        try db.query("UPDATE users SET time_zone = NULL, name = 'B' WHERE id = $1", [id])
        #expect(try slot() == "|")
        // A user without a summary row yet: nothing to move.
        let other = try db.addUser(name: "乙", email: "b@example.com")
        try db.query("UPDATE users SET time_zone = 'Europe/London' WHERE id = $1", [other])
        #expect(try db.query("SELECT count(*)::text FROM sileme.user_last_check_in WHERE user_id = $1", [other]) == [["0"]])
    }

    @Test("the daemon's look keeps the slots it has while the count of changes stands; each transaction that changes one moves it once")
    func slotsKeptWhileUnchanged() throws {
        let db = try TestDatabase()
        let london = try db.addUser(name: "甲", email: "a@example.com")
        try db.query("UPDATE users SET time_zone = 'Europe/London', notify_time = '07:00' WHERE id = $1", [london])
        let plain = try db.addUser(name: "乙", email: "b@example.com")
        func changes() throws -> Int64 { try SlotSQL.changes(db.connection) }
        let service = DailySchedule(time: TimeOfDay(hour: 9, minute: 0), timeZone: TimeZone(identifier: "Asia/Shanghai")!)
        let now = Date()
        let first = try SlotSQL.look(db.connection, service: service, known: nil, now: now)
        #expect(first.slots.slots.map(\.key) == ["Europe/London|07:00:00", "|"])
        // Nothing changed: the same slots, with the zone lookups they made (the same `ZoneOffsets`).
        let again = try SlotSQL.look(db.connection, service: service, known: first, now: now.addingTimeInterval(60))
        #expect(again.slots == first.slots && again.slots.slots[0].schedule.offsets === first.slots.slots[0].schedule.offsets)
        // What moves nothing: a user with neither, the same zone written again, another column.
        let counted = try changes()
        _ = try db.addUser(name: "丙", email: "c@example.com")
        try db.query("UPDATE users SET time_zone = 'Europe/London', name = '甲二' WHERE id = $1", [london])
        try db.query("DELETE FROM users WHERE id = $1", [plain])
        #expect(try changes() == counted)
        // A new time: the count moves, and the look reads the keys again.
        try db.query("UPDATE users SET notify_time = '20:00' WHERE id = $1", [london])
        #expect(try changes() == counted + 1)
        let moved = try SlotSQL.look(db.connection, service: service, known: first, now: now.addingTimeInterval(120))
        #expect(moved.slots.slots.map(\.key) == ["Europe/London|20:00:00", "|"] && moved.slots.slots[0].schedule.time == TimeOfDay(hour: 20, minute: 0))
        // Added and removed with a zone: once each. One transaction changing three users: once.
        let kolkata = try db.addUser(name: "丁", email: "d@example.com")
        try db.query("UPDATE users SET time_zone = 'Asia/Kolkata' WHERE id = $1", [kolkata])
        try db.query("DELETE FROM users WHERE id = $1", [kolkata])
        #expect(try changes() == counted + 3)
        try db.query("INSERT INTO users (name, emergency_email, time_zone) VALUES ('戊', 'e@example.com', 'Asia/Tokyo')")
        #expect(try changes() == counted + 4)
        try db.query("UPDATE users SET notify_time = '06:30'")
        #expect(try changes() == counted + 5)
        // Another service time (a reload), or an hour without a change: read again all the same.
        let reloaded = try SlotSQL.look(db.connection, service: DailySchedule(time: TimeOfDay(hour: 8, minute: 0), timeZone: service.timeZone),
                                        known: moved, now: now.addingTimeInterval(180))
        #expect(reloaded.slots.service.time == TimeOfDay(hour: 8, minute: 0))
        // A change the triggers did not see (off, as while a restore writes): learnt within the hour.
        let current = try SlotSQL.look(db.connection, service: service, known: nil, now: now)
        try db.query("ALTER TABLE users DISABLE TRIGGER sileme_count_user_times_update")
        try db.query("UPDATE users SET notify_time = '05:00' WHERE id = $1", [london])
        try db.query("ALTER TABLE users ENABLE TRIGGER sileme_count_user_times_update")
        let unseen = try SlotSQL.look(db.connection, service: service, known: current, now: now.addingTimeInterval(SlotSQL.Known.keptAtMost - 1))
        #expect(unseen.slots == current.slots && !unseen.slots.slots.map(\.key).contains("Europe/London|05:00:00"))
        let hourLater = try SlotSQL.look(db.connection, service: service, known: current, now: now.addingTimeInterval(SlotSQL.Known.keptAtMost))
        #expect(hourLater.slots.slots.map(\.key).contains("Europe/London|05:00:00"))
    }

    @Test("--date keeps its meaning: every user on that date, whatever their own time")
    func dateForEveryone() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        for person in Self.world { _ = try Self.add(db, mail, person, lastCheckIn: "2026-01-10") }
        let env = try NotifierProcess.environment(database: db)
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try Self.mailed(mail) == Set(Self.world.map(\.local)))
        #expect(try db.query("SELECT slots FROM sileme.notifier_runs") == [[nil]], "a run of everyone")
        // The dry run of a date names each user's own zone all the same.
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"], environment: env)
        let users = ((try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])?["users"] as? [[String: Any]]) ?? []
        let zones = Dictionary(users.compactMap { row in (row["name"] as? String).map { ($0, row["time_zone"] as? String) } }) { a, _ in a }
        #expect(zones["kolkata"] == "Asia/Kolkata" && zones["shanghai"] == "Asia/Shanghai" && zones["mars"] == "Asia/Shanghai", "\(zones)")
        #expect(users.allSatisfy { $0["run_date"] as? String == "2026-01-13" })
    }

    /// `HH:MM:SS` and the date in `zone` at `instant` (by default, `offset` seconds from now).
    static func local(_ zone: String, offset: TimeInterval, from now: Date = Date()) -> (time: String, date: CalendarDate) {
        let instant = now.addingTimeInterval(offset)
        let timeZone = TimeZone(identifier: zone)!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.hour, .minute, .second], from: instant)
        return (String(format: "%02d:%02d:%02d", c.hour!, c.minute!, c.second!), CalendarDate(instant, in: timeZone))
    }

    @Test("the daemon serves each user at their own instant on the wall clock; two daemons send each alert once")
    func daemonOwnInstants() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // Three users whose instants come 8, 14 and 20 s from now, in three zones (the last an
        // unknown name: NOTIFY_TIME_ZONE), each due on that instant's date in their zone.
        let plan: [(local: String, zone: String, offset: TimeInterval)] = [
            ("la", "America/Los_Angeles", 8), ("kolkata", "Asia/Kolkata", 14), ("mars", "Mars/Base", 20),
        ]
        var due: [String: Date] = [:]
        let now = Date()
        for person in plan {
            let served = TimeZone(identifier: person.zone) == nil ? "Asia/Shanghai" : person.zone
            let at = Self.local(served, offset: person.offset, from: now)
            _ = try Self.add(db, mail, Person(local: person.local, zone: person.zone, time: at.time, due: ""),
                             lastCheckIn: at.date.adding(days: -3).description)
            // The notify time names a whole second: the instant is at most a second before now + offset.
            due[person.local] = now.addingTimeInterval(person.offset - 1)
        }
        let env = try NotifierProcess.environment(database: db)
        let daemons = try (0..<2).map { _ in try NotifierProcess.start([], environment: env) }
        var arrived: [String: Date] = [:]
        var sessions: Set<String> = []  // the daemons' kept sessions seen meanwhile
        let deadline = Date().addingTimeInterval(45)
        while arrived.count < plan.count && Date() < deadline {
            for name in try Self.mailed(mail) where arrived[name] == nil { arrived[name] = Date() }
            sessions.formUnion(try db.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
                                            [SessionKeeper.applicationName]).compactMap { $0[0] })
            Thread.sleep(forTimeInterval: 0.1)
        }
        // Three instants' runs, the all-clear passes and a look a minute, on sessions kept from
        // one to the next: at most each daemon's idle limit (SMTP_CONNECTIONS 4 + 6) of them.
        #expect(!sessions.isEmpty && sessions.count <= 2 * 10, "\(sessions.count) sessions")
        #expect(try db.query("""
            SELECT count(*) > 0 FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND state = 'idle'
            """, [SessionKeeper.applicationName]).first?.first == "t", "kept between runs")
        for daemon in daemons {
            kill(daemon.0.processIdentifier, SIGTERM)
            #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
        }
        for person in plan {
            let when = try #require(arrived[person.local], "\(person.local) was alerted")
            // `due` is a second early of the whole second the notify time names: never before it.
            #expect(when >= due[person.local]!, "\(person.local) alerted \(due[person.local]!.timeIntervalSince(when)) s early")
        }
        #expect(try mail.deliveries().count == plan.count, "each alert once, with two daemons")
    }

    @Test("after downtime over several users' instants, each is caught up at once with the real count of days")
    func downtime() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // Instants 10, 20 and 30 minutes ago in three zones; one user missed yesterday's instant too.
        let plan: [(local: String, zone: String, offset: TimeInterval, missed: Int)] = [
            ("london", "Europe/London", -600, 2), ("newyork", "America/New_York", -1200, 2), ("tokyo", "Asia/Tokyo", -1800, 3),
        ]
        for person in plan {
            let at = Self.local(person.zone, offset: person.offset)
            _ = try Self.add(db, mail, Person(local: person.local, zone: person.zone, time: at.time, due: ""),
                             lastCheckIn: at.date.adding(days: -(person.missed + 1)).description)
        }
        let env = try NotifierProcess.environment(database: db)
        let daemon = try NotifierProcess.start([], environment: env)
        #expect(try DaemonIntegrationTests.eventually(20) { try mail.deliveries().count == plan.count })
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
        let rows = try db.query("""
            SELECT u.name, n.consecutive_miss_days::text FROM notification_logs n JOIN users u ON u.id = n.user_id
            WHERE n.email_sent ORDER BY u.name
            """)
        #expect(rows == plan.sorted { $0.local < $1.local }.map { [$0.local, String($0.missed)] })
    }

    @Test("a user who changes their zone and time is served at the new one without a restart")
    func movesWhileRunning() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // At first their instant is six hours away in Shanghai, and the latest one was served; then
        // the app writes a zone and time whose instant was five minutes ago, on a date where the
        // user is due (their check-ins stay as they are).
        let now = Date()
        let far = Self.local("Asia/Shanghai", offset: 6 * 3600, from: now)
        let near = Self.local("Europe/London", offset: -300, from: now)
        let id = try Self.add(db, mail, Person(local: "mover", zone: "Asia/Shanghai", time: far.time, due: ""),
                              lastCheckIn: near.date.adding(days: -3).description)
        try db.query("""
            INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, status, finished_at, slots)
            VALUES ($1, 'daemon', 'test', 1, 'completed', now(), ARRAY[$2])
            """, [far.date.adding(days: -1).description, "Asia/Shanghai|\(far.time)"])
        let env = try NotifierProcess.environment(database: db)
        let daemon = try NotifierProcess.start([], environment: env)
        Thread.sleep(forTimeInterval: 3)
        #expect(try mail.deliveries().isEmpty, "the latest instant of the user's slot was served")
        try db.query("UPDATE users SET time_zone = 'Europe/London', notify_time = $2::time WHERE id = $1", [id, near.time])
        // The daemon looks at the slots every minute.
        #expect(try DaemonIntegrationTests.eventually(80) { try mail.deliveries().count == 1 })
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)
        #expect(try db.query("SELECT notification_date::text, consecutive_miss_days::text FROM notification_logs WHERE email_sent")
                == [[near.date.description, "2"]])
        #expect(try db.query("SELECT count(*)::text FROM sileme.notifier_runs WHERE run_date = $1 AND status = 'completed' AND host <> 'test'",
                             [near.date.description]) == [["1"]], "one run, for the new time's date")
    }
}
