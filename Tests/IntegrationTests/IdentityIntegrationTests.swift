import Foundation
import Testing
import TestSupport
@testable import Values

/// What the notifier says of itself: `--version`, `check`'s version line, the version in every
/// run's `run_started` event, and the name it gives the mail server in EHLO (`SMTP_HELO_NAME`).
@Suite("Version and EHLO name", .serialized)
struct IdentityIntegrationTests {
    @Test("--version prints the version and exits 0")
    func version() throws {
        let result = try NotifierProcess.run(["--version"], environment: [:])
        #expect(result.status == 0)
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == NotifierVersion.current)
    }

    @Test("check reports the version")
    func checkVersion() throws {
        let db = try TestDatabase()
        let result = try NotifierProcess.run(["check"], environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 0)
        #expect(result.stderr.contains("ok   version: sileme-notifier \(NotifierVersion.current)"))
    }

    @Test("the EHLO name is the machine's fully qualified name by default, SMTP_HELO_NAME when set; run_started carries the version",
          .enabled(if: TestEnvironment.current?.journal == true))
    func greeting() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUser(name: "Default", email: mail.address("default-helo"), checkIns: ["2026-01-10"])
        let first = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(database: db))
        #expect(first.status == 0)
        let fqdn = try HostNameProbe.fullyQualified()
        #expect(try mail.deliveries().map(\.helo) == [fqdn])
        let started = try JournalReader.entries(of: first, minimum: 2).first { $0["NOTIFIER_EVENT"] == "run_started" }
        #expect(started?["NOTIFIER_VERSION"] == NotifierVersion.current)

        try db.addUser(name: "Named", email: mail.address("named-helo"), checkIns: ["2026-01-11"])
        let second = try NotifierProcess.run(["--run-now", "--date", "2026-01-14"],
                                             environment: try NotifierProcess.environment(database: db, ["SMTP_HELO_NAME": "notifier.sileme.example"]))
        #expect(second.status == 0)
        #expect(try mail.deliveries().map(\.helo) == [fqdn, "notifier.sileme.example"])
    }
}
