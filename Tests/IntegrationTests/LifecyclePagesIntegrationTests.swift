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
        // A run's first pass keeps none of them: it counts them for the second to stream.
        let plan = try RunPlan.read(connection, configuration: configuration, runDate: Self.runDate, scope: .day,
                                    keepsJobs: false, keepsSkips: true, streamsOwed: true)
        #expect(plan.owedLater == 18)
        #expect(plan.jobs.isEmpty && plan.owed.isEmpty)
        // Nothing was written: the same messages are still owed.
        #expect(try lifecycle.owed(connection, kinds: kinds).count == 18)
    }

    @Test("a run sends its new alerts first, then the all-clears it reads as it sends, each once; the next run owes none")
    func runStreamsThemAfterTheAlerts() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let configuration = try Self.prepare(db, mail, alerted: 15, checkedIn: 15, newlyDue: 6)
        let before = try mail.deliveries().count
        let result = try NotificationRun(configuration: configuration, runDate: Self.runDate, mode: .runNow, logger: Self.quiet).execute()
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.counts.sent == 6 + 30)
        #expect(result.counts.sentByKind[.allClear] == 30)
        let sent = try mail.deliveries().dropFirst(before)
        #expect(sent.count == 36)
        #expect(sent.prefix(6).allSatisfy { $0.recipient.hasPrefix("d") }, "the alerts first: \(sent.map(\.recipient))")
        #expect(Set(sent.dropFirst(6).map(\.recipient)) == Set((0..<15).flatMap { index in
            (1...2).map { mail.address("a\(index)-\($0)").lowercased() }
        }), "then every all-clear, once")
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE kind = 'all_clear' AND email_sent").first?.first == "30")
        let again = try NotificationRun(configuration: configuration, runDate: Self.runDate, mode: .runNow, logger: Self.quiet).execute()
        #expect(again.counts.sent == 0 && again.errors.isEmpty)
        #expect(try mail.deliveries().count == before + 36)
    }

    @Test("the daemon's all-clear pass streams what it counted: each all-clear once, and the queue settled")
    func allClearPassStreams() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let configuration = try Self.prepare(db, mail, alerted: 10, checkedIn: 7, newlyDue: 3)
        let before = try mail.deliveries().count
        let pass = NotificationRun(configuration: configuration, runDate: Self.runDate, mode: .daemon, logger: Self.quiet,
                                   scope: .allClears())
        let done = try pass.executeAllClears()
        #expect(done.sent == 14 && done.failed == 0, "two all-clears for each of the 7 users who checked in, no alert: \(done)")
        #expect(try mail.deliveries().count == before + 14)
        #expect(try pass.executeAllClears().sent == 0)
        #expect(try db.query("SELECT count(*) FROM sileme.pending_all_clears").first?.first == "0", "the queue is settled")
    }
}
