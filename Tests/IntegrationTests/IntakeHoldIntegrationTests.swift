import Foundation
import Testing
@testable import Config
@testable import Delivery
import Rule
@testable import Values
@testable import Store

/// The app's outage is not a mass emergency (docs/intake-hold.md): alerts whose missed days
/// include an intake gap are held, announced, and sent at the hold's end or by `release` —
/// except to users whose (late) check-ins arrived meanwhile.
@Suite("Intake gaps and held alerts, on real servers", .enabled(if: TestEnvironment.enabled))
struct IntakeHoldIntegrationTests {
    static func day(_ text: String) -> CalendarDate { CalendarDate(parsing: text)! }

    /// `count` users named `local1…`, each with a check-in on every day from `first` to `last`,
    /// and on `extra` days; their ids in order.
    @discardableResult
    static func addSteadyUsers(_ db: TestDatabase, _ mail: Mailbox, local: String, count: Int,
                               from first: CalendarDate, through last: CalendarDate) throws -> [String] {
        try db.query("""
            WITH u AS (INSERT INTO users (name, emergency_email)
                       SELECT $1 || g, $1 || g || '@' || $2 FROM generate_series(1, $3::int) g RETURNING id)
            INSERT INTO check_ins (user_id, check_in_date)
            SELECT id, d::date FROM u, generate_series($4::date, $5::date, interval '1 day') d
            """, [local, mail.domain, String(count), first.description, last.description])
        return try db.query("SELECT id::text FROM users WHERE name LIKE $1 || '%' ORDER BY substr(name, length($1) + 1)::int",
                            [local]).compactMap { $0[0] }
    }

    /// Late check-ins (the phones' queue, once the app is back) of `users` on `days`.
    static func checkInLate(_ db: TestDatabase, _ users: some Sequence<String>, on days: [CalendarDate]) throws {
        try db.query("INSERT INTO check_ins (user_id, check_in_date) SELECT u::uuid, d::date FROM unnest($1::text[]) u, unnest($2::text[]) d",
                     [PGArray.literal(Array(users)), PGArray.literal(days.map(\.description))])
    }

    /// The recipients' local parts, each as often as it was mailed.
    static func mailed(_ mail: Mailbox) throws -> [String] {
        try mail.deliveries().map { String($0.recipient.prefix { $0 != "@" }) }.sorted()
    }

    @Test("the outage of the 11th and 12th: 0 mails on the 13th, held and reported; 120 check in late, release mails exactly the 80 others, once")
    func outageHeldThenReleased() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // 200 users who check in every day, through the 10th; the app is down on the 11th and 12th.
        let steady = try Self.addSteadyUsers(db, mail, local: "steady", count: 200, from: Self.day("2025-12-15"), through: Self.day("2026-01-10"))
        // One who really stopped on the 5th: due on the 8th, before the outage.
        _ = try db.addUser(name: "stopped", email: mail.address("stopped"), checkIns: ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05"])
        let env = try NotifierProcess.environment(database: db)
        for date in ["2026-01-08", "2026-01-09", "2026-01-10", "2026-01-11", "2026-01-12"] {
            let run = try NotifierProcess.run(["--run-now", "--date", date], environment: env)
            #expect(run.status == 0, "\(date): \(run.stderr)")
        }
        #expect(try Self.mailed(mail) == ["stopped"], "the user who stopped is alerted on time, on the 8th")
        #expect(try db.query("SELECT notification_date::text FROM notification_logs WHERE email_sent") == [["2026-01-08"]])

        // The dry run of the 13th says what the run will do: every steady user held.
        let dry = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"], environment: env)
        let rows = ((try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])?["users"] as? [[String: Any]]) ?? []
        #expect(rows.filter { $0["decision"] as? String == "held" }.count == 200, "\(dry.stderr)")
        #expect(dry.stderr.contains("200 held"), "\(dry.stderr)")

        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.mailed(mail) == ["stopped"], "no family is told of the outage")
        #expect(run.stderr.contains("200 alert(s) held: their missed days include an intake gap (2026-01-11,2026-01-12)"), "\(run.stderr)")
        #expect(try db.query("SELECT held::text, due::text FROM sileme.notifier_runs WHERE run_date = '2026-01-13'") == [["200", "0"]])
        #expect(try db.query("SELECT count(*)::text, min(array_to_string(gap_days, ',')) FROM sileme.held_alerts")
                == [["200", "2026-01-11,2026-01-12"]])
        let check = try NotifierProcess.run(["check"], environment: env)
        #expect(check.stderr.contains("200 user(s)' alerts held over the intake gap(s) 2026-01-11, 2026-01-12")
                || check.stdout.contains("200 user(s)' alerts held over the intake gap(s) 2026-01-11, 2026-01-12"), "\(check.stdout)\(check.stderr)")
        // The history report shows the gaps and the run's held alerts.
        let report = try NotifierProcess.run(["report", "--from", "2026-01-10", "--to", "2026-01-12", "--format", "json"], environment: env)
        let history = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        let gaps = history?["intake_gaps"] as? [[String: Any]] ?? []
        #expect(gaps.map { $0["date"] as? String } == ["2026-01-11", "2026-01-12"], "\(report.stderr)")
        #expect(gaps.map { $0["intake"] as? Int } == [0, 0] && gaps.map { $0["held"] as? Int } == [200, 200])
        let table = try NotifierProcess.run(["report", "--from", "2026-01-10", "--to", "2026-01-12"], environment: env)
        #expect(table.stdout.contains("2026-01-11: 0 check-ins (usually 200), 200 user(s)' alerts held"), "\(table.stdout)")
        // A second run of the 13th holds the same streaks, records nothing new, mails no one.
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try db.query("SELECT count(*)::text FROM sileme.held_alerts") == [["200"]])
        #expect(try Self.mailed(mail) == ["stopped"])

        // The app is back: 120 phones send their queued check-ins for the 11th and 12th.
        try Self.checkInLate(db, steady.prefix(120), on: [Self.day("2026-01-11"), Self.day("2026-01-12")])
        let released = try NotifierProcess.run(["release", "--date", "2026-01-13"], environment: env)
        #expect(released.status == 0, "\(released.stderr)")
        let expected = (121...200).map { "steady\($0)" } + ["stopped"]
        #expect(try Self.mailed(mail) == expected.sorted(), "exactly the 80 who did not check in, once each")
        #expect(try db.query("SELECT count(*)::text FROM sileme.held_alerts WHERE ended_at IS NULL") == [["0"]])
        // Nothing more: not at a second release, not at another run.
        #expect(try NotifierProcess.run(["release", "--date", "2026-01-13"], environment: env).stderr.contains("nothing to release"))
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try Self.mailed(mail) == expected.sorted())
    }

    @Test("a hold ends by itself HOLD_HOURS after it began: the next run mails the held users who did not check in")
    func holdEndsByItself() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let steady = try Self.addSteadyUsers(db, mail, local: "steady", count: 120, from: Self.day("2025-12-15"), through: Self.day("2026-01-10"))
        let env = try NotifierProcess.environment(database: db, ["HOLD_HOURS": "0.001"])  // 3.6 s
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try Self.mailed(mail).isEmpty)
        try Self.checkInLate(db, steady.prefix(100), on: [Self.day("2026-01-12")])
        Thread.sleep(forTimeInterval: 4)
        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.mailed(mail) == (101...120).map { "steady\($0)" }.sorted())
    }

    @Test("a small service (the usual intake below INTAKE_MIN_USERS) is never held; a day 30% down is no gap; INTAKE_DROP_RATIO=0 turns it off")
    func notHeld() throws {
        // 50 users, all down on the 11th and 12th: below the minimum, alerted as always.
        let small = try TestDatabase()
        let smallMail = try Mailbox()
        try Self.addSteadyUsers(small, smallMail, local: "small", count: 50, from: Self.day("2025-12-15"), through: Self.day("2026-01-10"))
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: NotifierProcess.environment(database: small)).status == 0)
        #expect(try Self.mailed(smallMail).count == 50)

        // 200 users; on the 11th and 12th only 140 check in (a holiday): the 60 others are alerted.
        let busy = try TestDatabase()
        let busyMail = try Mailbox()
        let users = try Self.addSteadyUsers(busy, busyMail, local: "busy", count: 200, from: Self.day("2025-12-15"), through: Self.day("2026-01-10"))
        try Self.checkInLate(busy, users.prefix(140), on: [Self.day("2026-01-11"), Self.day("2026-01-12")])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: NotifierProcess.environment(database: busy)).status == 0)
        #expect(try Self.mailed(busyMail) == (141...200).map { "busy\($0)" }.sorted())

        // The outage, with the guard off: everyone is told.
        let off = try TestDatabase()
        let offMail = try Mailbox()
        try Self.addSteadyUsers(off, offMail, local: "off", count: 150, from: Self.day("2025-12-15"), through: Self.day("2026-01-10"))
        let env = try NotifierProcess.environment(database: off, ["INTAKE_DROP_RATIO": "0"])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        #expect(try Self.mailed(offMail).count == 150)
    }

    @Test("the daemon holds at its run, signs notifier.alerts_held; SIGKILL and a second daemon lose nothing; at the hold's end the held users still silent are mailed once")
    func daemonsThroughAHold() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        defer { receiver.stop() }
        // Today's run date in the service zone (09:00 Asia/Shanghai): the daemon catches it up at
        // start. The app was down the two days before it.
        let today = CalendarDate(Date().addingTimeInterval(-9 * 3600), in: TimeZone(identifier: "Asia/Shanghai")!)
        let steady = try Self.addSteadyUsers(db, mail, local: "steady", count: 120, from: today.adding(days: -25), through: today.adding(days: -3))
        let env = try NotifierProcess.environment(database: db, [
            "HOLD_HOURS": "0.005",  // 18 s
            "WEBHOOK_URL": receiver.plainURL, "WEBHOOK_SECRET": secret, "WEBHOOK_EVENTS": "notifier.alerts_held",
        ])
        let first = try NotifierProcess.start([], environment: env)
        #expect(try DaemonIntegrationTests.eventually(30) {
            try db.query("SELECT count(*)::text FROM sileme.held_alerts") == [["120"]]
        })
        #expect(try Self.mailed(mail).isEmpty, "nobody told at the run")
        let second = try NotifierProcess.start([], environment: env)
        kill(first.0.processIdentifier, SIGKILL)
        _ = NotifierProcess.finish(first.0, first.1, first.2)
        // The event for the operator, signed, once.
        #expect(try DaemonIntegrationTests.eventually(10) { try receiver.received().contains { $0.verified && $0.delivered } })
        let events = try receiver.received().filter(\.delivered)
        #expect(events.count == 1)
        let body = events.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any] }
        #expect(body?["type"] as? String == "notifier.alerts_held")
        let data = body?["data"] as? [String: Any]
        #expect(data?["held"] as? Int == 120)
        #expect(data?["gap_days"] as? [String] == [today.adding(days: -2).description, today.adding(days: -1).description])
        // 100 phones send their queued check-ins; the 20 others stay silent.
        try Self.checkInLate(db, steady.prefix(100), on: [today.adding(days: -2), today.adding(days: -1)])
        #expect(try DaemonIntegrationTests.eventually(60) { try Self.mailed(mail).count >= 20 })
        Thread.sleep(forTimeInterval: 3)
        #expect(try Self.mailed(mail) == (101...120).map { "steady\($0)" }.sorted(), "the 20 silent ones, each once")
        #expect(try DaemonIntegrationTests.eventually(10) {
            try db.query("SELECT count(*)::text FROM sileme.held_alerts WHERE ended_at IS NULL") == [["0"]]
        })
        kill(second.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(second.0, second.1, second.2).status == 0)
    }

    /// An outage of the app holds every user's alert in one run. The run's first pass hands its
    /// new holds over in batches (`RunPlan.holdBatch`) as it finds them, recorded at once, so it
    /// never keeps more than a batch; the dry run keeps none; and a later run reads each user's
    /// hold with the user (`Candidate.recordedHolds`), never every hold at once.
    @Test("a mass hold of more users than a batch: recorded in batches, each streak once, announced once with the whole count; the dry run keeps none; a later run finds each hold with its user")
    func massHoldInBatches() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let count = 2 * RunPlan.holdBatch + 37
        let steady = try Self.addSteadyUsers(db, mail, local: "steady", count: count, from: Self.day("2025-12-20"), through: Self.day("2026-01-10"))
        let configuration = try NotifierConfiguration.sendingToTestServer(database: db, connections: 1)
        let runDate = Self.day("2026-01-13")
        let connection = try PGConnection(configuration.database)
        try CheckInQueue.fold(connection)

        // The first pass as a run reads it: batches of holdBatch handed over, the rest kept.
        var batches: [[HoldStore.NewHold]] = []
        let first = try RunPlan.read(connection, configuration: configuration, runDate: runDate, scope: .day, keepsJobs: false,
                                     keepsSkips: true, held: { batches.append($0); return true })
        #expect(batches.map(\.count) == [RunPlan.holdBatch, RunPlan.holdBatch])
        #expect(first.newHolds.count == 37 && first.newHeld == count && first.tally.held == count)
        let handed = batches.flatMap { $0 } + first.newHolds
        #expect(Set(handed.map(\.streak.userID)) == Set(steady) && handed.count == count, "each held user handed over once")
        #expect(handed.allSatisfy { $0.streak.since == Self.day("2026-01-10") && $0.gapDays == [Self.day("2026-01-11"), Self.day("2026-01-12")] })
        // The dry run's read keeps none of them, and counts them all.
        let dry = try RunPlan.read(connection, configuration: configuration, runDate: runDate, scope: .day, keepsJobs: false)
        #expect(dry.newHolds.isEmpty && dry.newHeld == count && dry.tally.held == count)
        #expect(try db.query("SELECT count(*)::text FROM sileme.held_alerts") == [["0"]], "a plan writes nothing")

        // The run: every streak recorded once, announced once with the whole count, nobody mailed.
        let env = try NotifierProcess.environment(database: db)
        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        #expect(run.stderr.components(separatedBy: "alert(s) held: their missed days include an intake gap").count == 2, "announced once")
        #expect(run.stderr.contains("\(count) alert(s) held: their missed days include an intake gap (2026-01-11,2026-01-12)"))
        #expect(try db.query("SELECT count(*)::text, count(DISTINCT user_id)::text, count(DISTINCT release_at)::text FROM sileme.held_alerts")
                == [[String(count), String(count), "3"]], "each streak once; one release time per batch recorded")
        #expect(try db.query("SELECT held::text, due::text FROM sileme.notifier_runs WHERE run_date = '2026-01-13'") == [[String(count), "0"]])
        #expect(try Self.mailed(mail).isEmpty)

        // A later plan finds each user's hold with the user: still held, nothing new.
        let release = try #require(try db.query("SELECT extract(epoch FROM min(release_at))::text FROM sileme.held_alerts")[0][0].flatMap(Double.init))
        let later = try RunPlan.read(connection, configuration: configuration, runDate: runDate, scope: .day, keepsJobs: false,
                                     keepsSkips: true, held: { batches.append($0); return true })
        #expect(later.newHeld == 0 && later.newHolds.isEmpty && batches.count == 2 && later.tally.held == count)
        #expect(abs((later.heldUntil?.timeIntervalSince1970 ?? 0) - release) < 0.01, "the earliest recorded release")
        var read: [String: [CalendarDate: IntakeGuard.Hold]] = [:]
        try NotificationStore(owner: "test", claimLeaseSeconds: 60).streamCandidates(
            connection, runDate: runDate, rule: configuration.rule, holdsWithin: Self.day("2026-01-08")...Self.day("2026-01-10")) {
            read[$0.userID] = $0.recordedHolds
        }
        #expect(read.count == count && read.values.allSatisfy { $0.keys.sorted() == [Self.day("2026-01-10")] })
        #expect(read.values.allSatisfy { $0.values.first?.gapDays == [Self.day("2026-01-11"), Self.day("2026-01-12")] })
        var unread = 0
        try NotificationStore(owner: "test", claimLeaseSeconds: 60).streamCandidates(connection, runDate: runDate, rule: configuration.rule) {
            unread += $0.recordedHolds.isEmpty ? 1 : 0
        }
        #expect(unread == count, "without the range the batch query reads no hold")
    }

    @Test("a date still running in other zones is no gap: 900 users in Pago Pago (40% checked in so far) and 100 in Kiritimati, whose day is over — the due Kiritimati user is sent, not held; the report judges it the same; a real outage there still holds")
    func dayStillRunningElsewhere() throws {
        // Pago Pago (UTC−11) and Kiritimati (UTC+14) are 25 hours apart: at any moment Pago Pago's
        // date X is still running there and already over in Kiritimati.
        let x = CalendarDate(Date(), in: TimeZone(identifier: "Pacific/Pago_Pago")!)
        let runDate = x.adding(days: 1)
        func dry(_ env: [String: String]) throws -> [String: String] {
            let run = try NotifierProcess.run(["--run-now", "--dry-run", "--date", runDate.description, "--format", "json"], environment: env)
            let rows = ((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])?["users"] as? [[String: Any]]) ?? []
            return Dictionary(rows.compactMap { row in (row["name"] as? String).map { ($0, row["decision"] as? String ?? "") } }) { a, _ in a }
        }
        for outage in [false, true] {
            let db = try TestDatabase()
            let mail = try Mailbox()
            let west = try Self.addSteadyUsers(db, mail, local: "west", count: 900, from: x.adding(days: -30), through: x.adding(days: -1))
            try Self.checkInLate(db, west.prefix(360), on: [x])
            try Self.addSteadyUsers(db, mail, local: "east", count: 100, from: x.adding(days: -30), through: x.adding(days: outage ? -1 : 0))
            let ana = try db.addUser(name: "ana", email: mail.address("ana"),
                                     checkIns: (2...20).map { x.adding(days: -$0).description })
            try db.query("UPDATE users SET time_zone = 'Pacific/Pago_Pago' WHERE name LIKE 'west%'")
            try db.query("UPDATE users SET time_zone = 'Pacific/Kiritimati' WHERE name LIKE 'east%' OR id = $1::uuid", [ana])
            try db.foldCheckIns()
            let env = try NotifierProcess.environment(database: db)
            // Across every zone the date had 460 of the usual 1,001 check-ins: a gap, as it was judged before.
            #expect(try db.query("SELECT sum(users)::text FROM sileme.daily_intake WHERE day = $1::date", [x.description])
                    == [[outage ? "360" : "460"]])
            #expect(try db.query("SELECT time_zone, users::text FROM sileme.daily_intake WHERE day = $1::date ORDER BY 1", [x.description])
                    == (outage ? [["Pacific/Pago_Pago", "360"]] : [["Pacific/Kiritimati", "100"], ["Pacific/Pago_Pago", "360"]]))
            #expect(try dry(env)["ana"] == (outage ? "held" : "send"), "outage: \(outage)")
            let report = try NotifierProcess.run(["report", "--from", x.adding(days: -1).description, "--to", x.description, "--format", "json"],
                                                 environment: env)
            let history = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
            let gaps = (history?["intake_gaps"] as? [[String: Any]] ?? []).compactMap { $0["date"] as? String }
            // The report judges the days before the service's today (in Shanghai, X + 1 from 05:00 in Pago Pago).
            let judged = x < CalendarDate(Date(), in: TimeZone(identifier: "Asia/Shanghai")!)
            #expect(gaps == (outage && judged ? [x.description] : []), "\(report.stdout)\(report.stderr)")
            let run = try NotifierProcess.run(["--run-now", "--date", runDate.description], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try Self.mailed(mail) == (outage ? [] : ["ana"]))
        }
    }
}
