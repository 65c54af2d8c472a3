import Foundation
import Testing

/// Issue 6: the configuration file changing under a running daemon.
@Suite("Configuration changing while running", .enabled(if: TestEnvironment.enabled))
struct ConfigurationChangeIntegrationTests {
    @Test("a file rewritten under the daemon (half-written, with an unknown key) changes nothing until SIGHUP, which refuses it; the fire uses the configuration in force")
    func fileChangesUnderTheDaemon() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = DaemonIntegrationTests.localTime(offset: 5)
        try DaemonIntegrationTests.completedRun(db, on: fire.date.adding(days: -1))
        let users = try DaemonIntegrationTests.addDueUsers(db, mail, today: fire.date, count: 2)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("change-\(UUID().uuidString).conf").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "NOTIFY_TIME=\(fire.time)\nFROM_NAME=Before Team\n".write(toFile: file, atomically: true, encoding: .utf8)
        let notify = try NotifySocket()
        defer { notify.shutdown() }
        let env = try NotifierProcess.environment(database: db, ["NOTIFY_SOCKET": notify.path, "SILEME_CONFIG": file])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(notify.waitFor(10) { $0.contains("READY=1") } != nil)
        // Rewritten in place, as an editor without atomic saves leaves it mid-write.
        let handle = try #require(FileHandle(forWritingAtPath: file))
        handle.truncateFile(atOffset: 0)
        handle.write(Data("FROM_NAME=After Team\nSMTP_PORTT=25\nNOTIFY_TI".utf8))
        try handle.close()
        #expect(try DaemonIntegrationTests.eventually(20) { try mail.deliveries().count == 2 }, "the fire ran")
        for delivery in try mail.deliveries() {
            let text = String(decoding: delivery.raw, as: UTF8.self)
            #expect(text.contains("Before Team") && !text.contains("After Team"), "sent with the configuration in force")
        }
        kill(process.processIdentifier, SIGHUP)
        #expect(notify.waitFor(5) { $0.contains("RELOADING=1") } != nil)
        Thread.sleep(forTimeInterval: 1)
        #expect(process.isRunning, "a bad file on reload does not stop the daemon")
        kill(process.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0)
        for user in users { #expect(try db.logs(user).map(\.status) == ["sent"]) }
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: result, minimum: 3)
            #expect(entries.contains { $0["MESSAGE"]?.contains("configuration reload refused") == true && $0["MESSAGE"]?.contains("SMTP_PORTT") == true })
        }
    }
}
