import Foundation
import Testing
@testable import Values
@testable import Daemon

/// Daemon mode (issue 3): the real executable as systemd would run it, with a notify socket.
@Suite("Daemon on real servers", .enabled(if: TestEnvironment.enabled))
struct DaemonIntegrationTests {
    static let zone = TimeZone(identifier: "Asia/Shanghai")!

    /// `HH:MM:SS` in the service zone, `offset` seconds from now, and the date it falls on.
    static func localTime(offset: TimeInterval) -> (time: String, date: CalendarDate) {
        let instant = Date().addingTimeInterval(offset)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.hour, .minute, .second], from: instant)
        return (String(format: "%02d:%02d:%02d", c.hour!, c.minute!, c.second!), CalendarDate(instant, in: zone))
    }

    /// Polls until `condition` holds or `timeout` passes.
    static func eventually(_ timeout: TimeInterval, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        return false
    }

    /// Records a completed daemon run for `date` (so that the daemon has nothing to catch up).
    static func completedRun(_ db: TestDatabase, on date: CalendarDate) throws {
        try db.query("INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, status, finished_at) VALUES ($1, 'daemon', 'test', 1, 'completed', now())",
                     [date.description])
    }

    /// Users due today (last check-in three days before `today`), in `mail`'s domain.
    @discardableResult
    static func addDueUsers(_ db: TestDatabase, _ mail: Mailbox, today: CalendarDate, count: Int, local: String = "user") throws -> [String] {
        try (1...count).map { try db.addUser(name: "用户\($0)", email: mail.address("\(local)\($0)"), checkIns: [today.adding(days: -3).description]) }
    }

    @Test("fires once at NOTIFY_TIME, sends the due mails, and a second fire the same day does nothing; READY, STATUS, WATCHDOG, STOPPING")
    func firesOnce() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = Self.localTime(offset: 8)  // a few seconds ahead, with room for a loaded machine's start-up
        // The previous fire (yesterday at this time) already ran: no catch-up at start.
        try Self.completedRun(db, on: fire.date.adding(days: -1))
        let users = try Self.addDueUsers(db, mail, today: fire.date, count: 3)
        let notify = try NotifySocket()
        defer { notify.shutdown() }
        let env = try NotifierProcess.environment(database: db, [
            "NOTIFY_TIME": fire.time, "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "2000000",
        ])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        let started = Date()
        let ready = notify.waitFor(10) { $0.contains("READY=1") }
        // The status shows a time on the minute as HH:MM (Daemon.format): a fire that lands on :00
        // seconds (one start in sixty) failed this test.
        let shown = fire.time.hasSuffix(":00") ? String(fire.time.dropLast(3)) : fire.time
        #expect(ready?.contains("STATUS=started; next run \(fire.date) \(shown) +08, last run: none yet") == true, "\(ready ?? "no READY")")
        #expect(try mail.deliveries().isEmpty, "nothing before the fire time")
        #expect(try Self.eventually(20) { try mail.deliveries().count == 3 })
        #expect(try Self.eventually(5) {
            try db.query("SELECT count(*) FROM sileme.notifier_runs WHERE run_date = $1 AND status = 'completed'", [fire.date.description]).first?.first == "1"
        })
        let status = notify.waitFor(5) { $0.contains("STATUS=waiting; next run \(fire.date.adding(days: 1)) \(shown) +08, last run: \(fire.date): 3 sent, 0 failed") }
        #expect(status != nil)
        Thread.sleep(forTimeInterval: 2)
        #expect(try mail.deliveries().count == 3, "no second run the same day")
        #expect(try db.query("SELECT count(*) FROM sileme.notifier_runs WHERE run_date = $1", [fire.date.description]).first?.first == "1")
        for user in users { #expect(try db.logs(user).map(\.status) == ["sent"]) }
        kill(process.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0)
        #expect(notify.waitFor(3) { $0.contains("STOPPING=1") } != nil)
        // WATCHDOG=1 at about half of WatchdogSec (1 s here), never much slower.
        let pings = notify.messages.filter { $0.text.contains("WATCHDOG=1") }.map(\.time)
        let elapsed = Date().timeIntervalSince(started)
        #expect(Double(pings.count) >= elapsed / 1.0 * 0.5, "\(pings.count) pings in \(elapsed) s")
        let gaps = zip(pings.dropFirst(), pings).map { $0.timeIntervalSince($1) }
        #expect((gaps.max() ?? 0) < 1.9, "the longest gap between pings stays under WatchdogSec")
    }

    @Test("starting after the fire time with no completed run catches up at once, and only once")
    func catchUp() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = Self.localTime(offset: -3600)
        try Self.addDueUsers(db, mail, today: fire.date, count: 2)
        let env = try NotifierProcess.environment(database: db, ["NOTIFY_TIME": fire.time])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        #expect(try Self.eventually(15) { try mail.deliveries().count == 2 })
        kill(process.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(process, out, err).status == 0)
        // Restarted: today's run is recorded as completed, so nothing happens.
        let again = try NotifierProcess.start([], environment: env)
        Thread.sleep(forTimeInterval: 2)
        kill(again.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(again.0, again.1, again.2).status == 0)
        #expect(try mail.deliveries().count == 2)
        #expect(try db.query("SELECT count(*) FROM sileme.notifier_runs WHERE run_date = $1", [fire.date.description]).first?.first == "1")
    }

    @Test("SIGTERM during dispatch finishes the message in flight, exits 0, and the restart sends the rest: no alert lost, none doubled")
    func sigtermDuringDispatch() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = Self.localTime(offset: -3600)
        let users = try Self.addDueUsers(db, mail, today: fire.date, count: 4, local: "slow1-")
        let env = try NotifierProcess.environment(database: db, ["NOTIFY_TIME": fire.time, "SMTP_CONNECTIONS": "1"])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        #expect(try Self.eventually(15) { try mail.deliveries().count >= 1 })
        Thread.sleep(forTimeInterval: 0.3)
        kill(process.processIdentifier, SIGTERM)
        let stopped = Date()
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0)
        #expect(Date().timeIntervalSince(stopped) < 5)
        #expect(try db.query("SELECT count(*) FROM notification_logs WHERE status = 'sending'").first?.first == "0", "the message in flight was recorded")
        let sentBefore = try mail.deliveries().count
        #expect(sentBefore < 4, "\(result.stderr.suffix(3000))")
        #expect(try db.query("SELECT status FROM sileme.notifier_runs").first?.first == "failed", "an interrupted run is not complete")
        // Restart: the unfinished run is caught up.
        let again = try NotifierProcess.start([], environment: env)
        #expect(try Self.eventually(20) { try mail.deliveries().count == 4 })
        Thread.sleep(forTimeInterval: 0.5)
        kill(again.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(again.0, again.1, again.2).status == 0)
        #expect(Set(try mail.deliveries().map(\.recipient)).count == 4)
        for user in users { #expect(try db.logs(user).map(\.emailSent) == [true]) }
    }

    @Test("a transient failure is retried by the daemon later the same day")
    func laterRetry() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = Self.localTime(offset: -3600)
        let user = try db.addUser(name: "Later", email: mail.address("temp451once"), checkIns: [fire.date.adding(days: -3).description])
        let env = try NotifierProcess.environment(database: db, [
            "NOTIFY_TIME": fire.time, "SMTP_RETRY_ATTEMPTS": "1", "RETRY_LATER_SECONDS": "2",
        ])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        #expect(try Self.eventually(20) { try mail.deliveries().count == 1 })
        kill(process.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(process, out, err).status == 0)
        let row = try #require(try db.logs(user).first)
        #expect(row.emailSent && row.attempts == 2)
        #expect(try mail.events().map(\.code).prefix(2) == [451, 250])
    }

    @Test("SIGHUP reloads a good configuration and refuses a bad one, keeping the old in force")
    func reload() throws {
        let db = try TestDatabase()
        let fire = Self.localTime(offset: -3600)
        try Self.completedRun(db, on: fire.date)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("reload-\(UUID().uuidString).conf").path
        try "NOTIFY_TIME=\(fire.time)\n".write(toFile: file, atomically: true, encoding: .utf8)
        let notify = try NotifySocket()
        defer { notify.shutdown() }
        let env = try NotifierProcess.environment(database: db, ["NOTIFY_SOCKET": notify.path, "SILEME_CONFIG": file])
        let (process, out, err) = try NotifierProcess.start([], environment: env)
        #expect(notify.waitFor(10) { $0.contains("READY=1") } != nil)
        try "NOTIFY_TIME=06:30\n".write(toFile: file, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        #expect(notify.waitFor(5) { $0.contains("RELOADING=1") && $0.contains("MONOTONIC_USEC=") } != nil)
        #expect(notify.waitFor(5) { $0.contains("READY=1") && $0.contains("06:30 +08") } != nil)
        try "NOTIFY_TIME=25:99\n".write(toFile: file, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        Thread.sleep(forTimeInterval: 1)
        let readies = notify.messages.filter { $0.text.contains("READY=1") }
        #expect(readies.count == 3)
        #expect(readies.last?.text.contains("06:30 +08") == true, "the previous configuration stays in force")
        kill(process.processIdentifier, SIGTERM)
        let result = NotifierProcess.finish(process, out, err)
        #expect(result.status == 0)
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: result, minimum: 3)
            #expect(entries.contains { $0["MESSAGE"]?.contains("configuration reload refused") == true && $0["MESSAGE"]?.contains("NOTIFY_TIME") == true && $0["PRIORITY"] == "3" })
        }
    }

    @Test("the heartbeat URL is fetched after each run, with /fail when the run failed")
    func heartbeat() throws {
        // A real HTTP server (Python's http.server) that records each request's path.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("hb-\(UUID().uuidString).log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-c", """
            import http.server, sys
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    open(sys.argv[1], "a").write(self.path + "\\n"); self.send_response(200); self.end_headers(); self.wfile.write(b"OK")
                def log_message(self, *a): pass
            s = http.server.HTTPServer(("127.0.0.1", 0), H)
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """, log]
        let portPipe = Pipe()
        server.standardOutput = portPipe
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        let port = String(decoding: portPipe.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let paths = { (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? [] }

        let db = try TestDatabase()
        let mail = try Mailbox()
        let fire = Self.localTime(offset: -3600)
        try Self.addDueUsers(db, mail, today: fire.date, count: 1)
        let ok = try NotifierProcess.start([], environment: try NotifierProcess.environment(database: db, [
            "NOTIFY_TIME": fire.time, "HEARTBEAT_URL": "http://127.0.0.1:\(port)/ping/abc",
        ]))
        #expect(Self.eventually(15) { paths() == ["/ping/abc"] })
        kill(ok.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(ok.0, ok.1, ok.2).status == 0)

        // A run that cannot deliver (the mail server refuses the connection) pings /fail.
        let failing = try TestDatabase()
        try Self.addDueUsers(failing, mail, today: fire.date, count: 1, local: "down")
        let bad = try NotifierProcess.start([], environment: try NotifierProcess.environment(database: failing, [
            "NOTIFY_TIME": fire.time, "HEARTBEAT_URL": "http://127.0.0.1:\(port)/ping/abc", "SMTP_PORT": "1",
            "SMTP_RETRY_ATTEMPTS": "1",
        ]))
        #expect(Self.eventually(15) { paths().contains("/ping/abc/fail") })
        kill(bad.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(bad.0, bad.1, bad.2).status == 0)
    }

    @Test("a bad configuration or an unmigrated database stops the daemon at start with exit 78")
    func startupFailures() throws {
        let db = try TestDatabase()
        let bad = try NotifierProcess.run([], environment: try NotifierProcess.environment(database: db, ["NOTIFY_TIME": "9h"]))
        #expect(bad.status == 78 && bad.stderr.contains("NOTIFY_TIME"))
        let fresh = try TestDatabase(migrate: false)
        let unmigrated = try NotifierProcess.run([], environment: try NotifierProcess.environment(database: fresh))
        #expect(unmigrated.status == 78)
    }
}
