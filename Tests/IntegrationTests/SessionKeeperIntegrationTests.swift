import Foundation
import Logging
import Testing
@testable import Values
@testable import Config
@testable import Store
@testable import Delivery

/// The daemon's kept sessions (`SessionKeeper`): taken again rather than opened, never handed out
/// broken or mid-transaction, and holding their claims by a lease.
@Suite("Kept database sessions on real servers", .enabled(if: TestEnvironment.enabled))
struct SessionKeeperIntegrationTests {
    @Test("every session keeps its TCP flow alive and gives up on data unacknowledged for 30 s; the connection string's own settings win")
    func tcpSettings() throws {
        let db = try TestDatabase()
        let session = try PGConnection(Secret(db.url), schema: .standard)
        #expect(session.option("host") == "127.0.0.1", "over TCP, where the settings count")
        for (keyword, value) in [("keepalives", "1"), ("keepalives_idle", "60"), ("keepalives_interval", "10"),
                                 ("keepalives_count", "3"), ("tcp_user_timeout", "30000"), ("connect_timeout", "10")] {
            #expect(session.option(keyword) == value, "\(keyword)")
        }
        let separator = db.url.contains("?") ? "&" : "?"
        let own = try PGConnection(Secret(db.url + separator + "tcp_user_timeout=5000&keepalives_idle=20"), schema: .standard)
        #expect(own.option("tcp_user_timeout") == "5000" && own.option("keepalives_idle") == "20" && own.option("keepalives_count") == "3")
        #expect(try own.execute("SELECT 1")[0].int(0) == 1)
    }

    @Test("a kept session is taken again; one in a transaction, gone or over the limit is not; idle ones are closed")
    func keptAndDropped() throws {
        let db = try TestDatabase()
        let keeper = SessionKeeper(Secret(db.url), schema: .standard, limit: 2, idleSeconds: 600)
        let first = try keeper.take()
        let pid = first.backendPID
        #expect(try first.isDirect && !first.claimsByBackend, "a kept session claims by a lease")
        keeper.keep(first)
        #expect(try keeper.take().backendPID == pid, "the same server process")
        // Given back with a transaction open: closed, not kept.
        let busy = try keeper.take()
        try busy.execute("BEGIN")
        keeper.keep(busy)
        #expect(keeper.idleCount == 0)
        // Its server process ended while it was idle (a restart, an administrator): passed over.
        let doomed = try keeper.take()
        keeper.keep(doomed)
        try db.query("SELECT pg_terminate_backend($1::int)", [String(doomed.backendPID)])
        for _ in 0..<50 where try db.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int",
                                             [String(doomed.backendPID)]).first?.first != "0" {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let fresh = try keeper.take()
        #expect(fresh.backendPID != doomed.backendPID)
        #expect(try fresh.execute("SELECT 1")[0].int(0) == 1)
        // At most `limit` idle.
        let more = [fresh, try keeper.take(), try keeper.take()]
        for session in more { keeper.keep(session) }
        #expect(keeper.idleCount == 2)
        keeper.closeIdle(now: Date().addingTimeInterval(599))
        #expect(keeper.idleCount == 2, "not idle for long yet")
        keeper.closeIdle(now: Date().addingTimeInterval(601))
        #expect(keeper.idleCount == 0)
    }

    @Test("runs sharing a keeper send through its sessions: the second run opens none, and its claims hold a lease")
    func runsReuseSessions() throws {
        let db = try TestDatabase()
        let first = try Mailbox()
        let second = try Mailbox()
        try db.addUsers(count: 30, domain: first.domain, lastCheckIn: "2026-01-10")
        try db.addUsers(count: 30, domain: second.domain, lastCheckIn: "2026-01-11")
        let configuration = try NotifierConfiguration.sendingToTestServer(database: db, connections: 2)
        let keeper = SessionKeeper(configuration.database, senders: configuration.smtp.connections)
        let sessions = {
            Set(try db.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
                .compactMap { $0[0] })
        }
        func run(_ day: String) throws -> RunResult {
            var run = NotificationRun(configuration: configuration, runDate: try #require(CalendarDate(parsing: day)), mode: .daemon,
                                      logger: Logger(label: "kept") { _ in SwiftLogNoOpLogHandler() })
            run.sessions = keeper
            return try run.execute()
        }
        #expect(try run("2026-01-13").counts.sent == 30)
        let afterFirst = try sessions()
        #expect(!afterFirst.isEmpty && keeper.idleCount == afterFirst.count, "the run's sessions are kept, idle")
        #expect(try run("2026-01-14").counts.sent == 30)
        #expect(try sessions().subtracting(afterFirst).isEmpty, "the second run opened no session")
        #expect(try first.deliveries().count == 30)
        #expect(try second.deliveries().count == 30)
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE claim_backend_pid IS NOT NULL").first?.first == "0",
                "a kept session's claims hold a lease, not its process's life")
    }
}
