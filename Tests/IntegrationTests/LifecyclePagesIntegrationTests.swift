import Foundation
import Logging
import Testing
@testable import Config
@testable import Delivery
@testable import Store
@testable import Values

/// The lifecycle's owed messages read a page at a time (docs/delivery.md, "What a run holds"):
/// the same messages in the same order as read whole, and a run that sends them after its alerts
/// as it reads them.
@Suite("The lifecycle's owed messages a page at a time, on real servers", .enabled(if: TestEnvironment.enabled), .serialized)
struct LifecyclePagesIntegrationTests {
    static let quiet = Logger(label: "pages") { _ in SwiftLogNoOpLogHandler() }
    static let alertDate = CalendarDate(parsing: "2026-01-13")!
    static let runDate = CalendarDate(parsing: "2026-01-14")!

    /// `alerted` users alerted on the alert date — each with a second contact, so that one user
    /// owes two all-clears — of whom `checkedIn` checked in on the run date, and `newlyDue` users
    /// due on the run date. Returns the configuration (one sender: the mails arrive in the order
    /// they are sent).
    static func prepare(_ db: TestDatabase, _ mail: Mailbox, alerted: Int, checkedIn: Int, newlyDue: Int) throws
        -> NotifierConfiguration {
        var configuration = try NotifierConfiguration.sendingToTestServer(database: db, connections: 1)
        configuration.webhook = nil
        var users: [String] = []
        for index in 0..<alerted {
            let user = try db.addUser(name: "Alerted \(index)", email: mail.address("unused\(index)"), checkIns: ["2026-01-10"])
            for position in 1...2 {
                try db.query("INSERT INTO emergency_contacts (user_id, email, position) VALUES ($1, $2, $3)",
                             [user, mail.address("a\(index)-\(position)"), String(position)])
            }
            users.append(user)
        }
        let first = try NotificationRun(configuration: configuration, runDate: alertDate, mode: .runNow, logger: quiet).execute()
        #expect(first.counts.sent == 2 * alerted, "\(first.errors)")
        for user in users.prefix(checkedIn) { try db.checkIn(user, runDate.description) }
        for index in 0..<newlyDue {
            try db.addUser(name: "Due \(index)", email: mail.address("d\(index)"), checkIns: ["2026-01-11"])
        }
        try db.foldCheckIns()
        return configuration
    }

    @Test("read a page at a time, at any page size: the jobs read whole, in the same order, each delivery key once")
    func pagesAreTheWhole() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let configuration = try Self.prepare(db, mail, alerted: 12, checkedIn: 9, newlyDue: 0)
        let connection = try PGConnection(configuration.database, applicationName: "pages test")
        let lifecycle = Lifecycle(configuration: configuration, runDate: Self.runDate, logger: Self.quiet)
        let kinds = RunPlan.Scope.day.kinds
        let whole = try lifecycle.jobs(connection, owed: lifecycle.owed(connection, kinds: kinds)).jobs
            .map { Dispatcher.key($0, runDate: Self.runDate) }
        #expect(whole.count == 18, "two all-clears for each of the 9 users who checked in: \(whole)")
        for size in [1, 7, 18, 500] {
            var pages: [[String]] = []
            let count = try lifecycle.stream(connection, kinds: kinds, page: size) { jobs in
                pages.append(jobs.map { Dispatcher.key($0, runDate: Self.runDate) })
            }
            #expect(pages.flatMap { $0 } == whole, "page size \(size)")
            #expect(count == whole.count)
            #expect(pages.allSatisfy { $0.count <= size }, "page size \(size): \(pages.map(\.count))")
            #expect(pages.count == (whole.count + size - 1) / size, "page size \(size): \(pages.map(\.count))")
        }
        // A run's first pass keeps so few as read: nothing to read again.
        let plan = try RunPlan.read(connection, configuration: configuration, runDate: Self.runDate, scope: .day,
                                    keepsJobs: false, keepsSkips: true, streamsOwed: true)
        #expect(plan.owedLater == 0 && plan.owed.isEmpty)
        #expect(plan.jobs.map { Dispatcher.key($0, runDate: Self.runDate) } == whole)
        // Nothing was written: the same messages are still owed.
        #expect(try lifecycle.owed(connection, kinds: kinds).count == 18)
    }

    @Test("a run owing more than it keeps: its new alerts first, then the all-clears it reads as it sends, each once; the next run owes none")
    func runStreamsThemAfterTheAlerts() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let alerted = RunPlan.owedKept / 2 + 5
        let configuration = try Self.prepare(db, mail, alerted: alerted, checkedIn: alerted, newlyDue: 6)
        let owed = 2 * alerted
        // The first pass counts them, and keeps none: more than it keeps.
        let connection = try PGConnection(configuration.database, applicationName: "pages test")
        let plan = try RunPlan.read(connection, configuration: configuration, runDate: Self.runDate, scope: .day,
                                    keepsJobs: false, keepsSkips: true, streamsOwed: true)
        #expect(plan.owedLater == owed && plan.jobs.isEmpty && plan.ruleJobs == 6)
        let before = try mail.deliveries().count
        let result = try NotificationRun(configuration: configuration, runDate: Self.runDate, mode: .runNow, logger: Self.quiet).execute()
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.counts.sent == 6 + owed)
        #expect(result.counts.sentToContacts(.allClear) == owed)
        let sent = try mail.deliveries().dropFirst(before)
        #expect(sent.count == 6 + owed)
        #expect(sent.prefix(6).allSatisfy { $0.recipient.hasPrefix("d") }, "the alerts first: \(sent.prefix(8).map(\.recipient))")
        #expect(Set(sent.dropFirst(6).map(\.recipient)) == Set((0..<alerted).flatMap { index in
            (1...2).map { mail.address("a\(index)-\($0)").lowercased() }
        }) && sent.count == Set(sent.map(\.recipient)).count, "then every all-clear, once")
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE kind = 'all_clear' AND email_sent").first?.first == "\(owed)")
        let again = try NotificationRun(configuration: configuration, runDate: Self.runDate, mode: .runNow, logger: Self.quiet).execute()
        #expect(again.counts.sent == 0 && again.errors.isEmpty)
        #expect(try mail.deliveries().count == before + 6 + owed)
    }

    @Test("the daemon's all-clear pass owing more than it keeps streams what it counted: each all-clear once, and the queue settled")
    func allClearPassStreams() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let alerted = RunPlan.owedKept / 2 + 5
        let configuration = try Self.prepare(db, mail, alerted: alerted + 3, checkedIn: alerted, newlyDue: 3)
        let before = try mail.deliveries().count
        let pass = NotificationRun(configuration: configuration, runDate: Self.runDate, mode: .daemon, logger: Self.quiet,
                                   scope: .allClears())
        let done = try pass.executeAllClears()
        #expect(done.sent == 2 * alerted && done.failed == 0, "two all-clears for each user who checked in, no alert: \(done)")
        let sent = try mail.deliveries().dropFirst(before)
        #expect(sent.count == 2 * alerted && Set(sent.map(\.recipient)).count == 2 * alerted)
        #expect(try pass.executeAllClears().sent == 0)
        #expect(try db.query("SELECT count(*) FROM sileme.pending_all_clears").first?.first == "0", "the queue is settled")
    }
}
