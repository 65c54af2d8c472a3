import Foundation
import Logging
import Testing
@testable import Config
@testable import Delivery
import Rule
@testable import Store
@testable import Values

/// The dispatcher drives any channel through claim → send → record: a fake channel, scripted per
/// recipient, on a real database — the rows, the tally and the attempts are what docs/delivery.md
/// says, whatever the channel.
@Suite("Dispatcher with a fake channel, on real PostgreSQL", .enabled(if: TestEnvironment.enabled))
struct DispatcherChannelIntegrationTests {
    /// What each recipient's attempts throw in turn (once they are used up: "250 fake"), and the
    /// attempts made, shared by every worker's channel.
    final class Script: @unchecked Sendable {
        private let state: Locked<(failures: [String: [ChannelFailure]], attempts: [String: Int], ids: [String])>

        init(_ failures: [String: [ChannelFailure]]) { state = Locked((failures, [:], [])) }

        func attempt(_ recipient: String) throws(ChannelFailure) -> String {
            let failure = state.withLock { state -> ChannelFailure? in
                state.attempts[recipient, default: 0] += 1
                guard var queue = state.failures[recipient], !queue.isEmpty else { return nil }
                let next = queue.removeFirst()
                state.failures[recipient] = queue
                return next
            }
            if let failure { throw failure }
            return "250 fake \(recipient)"
        }

        func newID() -> String {
            let id = "fake\(UUID().uuidString.prefix(8).lowercased())"
            state.withLock { $0.ids.append(id) }
            return id
        }

        func attempts(_ recipient: String) -> Int { state.withLock { $0.attempts[recipient, default: 0] } }
        var ids: [String] { state.withLock { $0.ids } }
    }

    /// A channel that sends nothing anywhere: it asks `script`.
    final class FakeChannel: DeliveryChannel {
        let channel: DeliveryJob.Channel
        let words = ChannelWords(server: "the fake server", messageIDField: "fake_id", replyField: "fake_reply", bracketsIDs: false)
        let script: Script

        init(_ channel: DeliveryJob.Channel, _ script: Script) {
            self.channel = channel
            self.script = script
        }

        func newMessageID(for job: DeliveryJob) -> String { script.newID() }

        func attempt(_ job: DeliveryJob, claim: Claim) -> ChannelAttempt {
            let (script, recipient) = (script, job.email.address)
            return { () throws(ChannelFailure) in try script.attempt(recipient) }
        }

        func describe(_ job: DeliveryJob) -> String { "fake \(job.kind.rawValue)" }
    }

    /// Reads the day's plan on `runDate` and delivers it through `script`'s channels.
    static func deliver(_ db: TestDatabase, _ script: Script, attempts: Int = 2) throws -> DeliveryResult {
        var configuration = try NotifierConfiguration.sendingToTestServer(database: db, connections: 1)
        configuration.smtp.retryAttempts = attempts
        configuration.smtp.retryBackoffSeconds = 0.01
        let runDate = try #require(CalendarDate(parsing: "2026-01-13"))
        let connection = try PGConnection(configuration.database)
        try CheckInQueue.fold(connection)
        let plan = try RunPlan.read(connection, configuration: configuration, runDate: runDate, scope: .day)
        let store = NotificationStore(owner: "fake:\(UUID().uuidString.prefix(8))", claimLeaseSeconds: configuration.claimLeaseSeconds)
        let dispatcher = Dispatcher(configuration: configuration, store: store, runDate: runDate, runID: nil,
                                    logger: Logger(label: "fake") { _ in SwiftLogNoOpLogHandler() },
                                    channels: DeliveryChannels { _ in DeliveryJob.Channel.allCases.map { FakeChannel($0, script) } },
                                    control: RunControl())
        return dispatcher.deliver(plan.jobs)
    }

    @Test("delivered, delivered on a retry, refused for good, and a server that stays unusable")
    func outcomes() throws {
        let db = try TestDatabase()
        let fine = try db.addUser(name: "Fine", email: "fine@example.com", checkIns: ["2026-01-10"])
        let again = try db.addUser(name: "Again", email: "again@example.com", checkIns: ["2026-01-10"])
        let refused = try db.addUser(name: "Refused", email: "refused@example.com", checkIns: ["2026-01-10"])
        let down = try db.addUser(name: "Down", email: "down@example.com", checkIns: ["2026-01-10"])
        let down5 = Array(repeating: ChannelFailure.transient("curl error 7: refused", .serverUnusable), count: 5)
        let script = Script([
            "again@example.com": [.transient("451 4.3.0 later", .thisMessage)],
            "refused@example.com": [.permanent("550 5.1.1 no such user refused@example.com", undeliverable: true)],
            "down@example.com": down5,
        ])
        let result = try Self.deliver(db, script, attempts: 3)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.tally.sent == 2 && result.tally.failed == 2)
        #expect(result.tally.failedPermanently == 1 && result.tally.serverUnavailable == 1)
        // The recorder marks the accepted messages' contacts `ok` (the refused one is undeliverable).
        #expect(result.contactsNotMarked == nil)
        #expect(try db.query("SELECT email, status FROM contact_status ORDER BY email")
                == [["again@example.com", "ok"], ["fine@example.com", "ok"], ["refused@example.com", "undeliverable"]])

        let fineRow = try #require(try db.logs(fine).first)
        #expect(fineRow.status == "sent" && fineRow.emailSent && fineRow.attempts == 1)
        #expect(script.ids.contains(fineRow.messageID ?? ""), "the row keeps the channel's own id")
        let againRow = try #require(try db.logs(again).first)
        #expect(againRow.status == "sent" && againRow.emailSent && againRow.attempts == 2)
        let refusedRow = try #require(try db.logs(refused).first)
        #expect(refusedRow.status == "failed" && !refusedRow.emailSent && refusedRow.attempts == 1)
        let masked = try EmailAddress(validating: "refused@example.com").masked
        #expect(refusedRow.lastError == "550 5.1.1 no such user \(masked)", "the address is masked in the recorded reply")
        let downRow = try #require(try db.logs(down).first)
        #expect(downRow.status == "retry" && !downRow.emailSent && downRow.attempts == 3)
        #expect(script.attempts("down@example.com") == 3 && script.attempts("refused@example.com") == 1)
    }

    /// The recorder marks the accepted messages' contacts `ok` in batches of `okBatch` as their
    /// outcomes are written, and the rest when it finishes: none is left out between batches.
    @Test("more accepted messages than the recorder marks at once: every contact marked ok")
    func contactsMarkedInBatches() throws {
        let db = try TestDatabase()
        let count = 2 * ResultRecorder.okBatch + 7
        try db.addUsers(count: count, domain: "example.com", lastCheckIn: "2026-01-10")
        let result = try Self.deliver(db, Script([:]))
        #expect(result.errors.isEmpty && result.contactsNotMarked == nil, "\(result.errors)")
        #expect(result.tally.sent == count)
        #expect(try db.query("SELECT count(*), count(DISTINCT email) FROM contact_status WHERE status = 'ok'")
                == [[String(count), String(count)]])
    }

    @Test("after three messages in a row found the server unusable, the rest are kept for later without an attempt")
    func unavailableLimit() throws {
        let db = try TestDatabase()
        let users = try (1...5).map { try db.addUser(name: "Down \($0)", email: "down\($0)@example.com", checkIns: ["2026-01-10"]) }
        let failures = Dictionary(uniqueKeysWithValues: (1...5).map {
            ("down\($0)@example.com", Array(repeating: ChannelFailure.transient("curl error 7: refused", .serverUnusable), count: 2))
        })
        let script = Script(failures)
        let result = try Self.deliver(db, script, attempts: 2)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.tally.serverUnavailable == 5 && result.tally.sent == 0)
        let attempted = (1...5).map { script.attempts("down\($0)@example.com") }
        #expect(attempted.reduce(0, +) == Dispatcher.unavailableLimit * 2, "\(attempted)")
        let rows = try users.map { try #require(try db.logs($0).first) }
        #expect(rows.allSatisfy { $0.status == "retry" && !$0.emailSent })
        #expect(rows.filter { $0.attempts == 0 }.count == 5 - Dispatcher.unavailableLimit)
        #expect(rows.filter { $0.lastError?.hasPrefix("not attempted: the fake server was unavailable") == true }.count == 2)
    }
}
