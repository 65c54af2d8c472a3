import Foundation

/// An SMTP server of one test's own: `scripts/testenv/smtp_server.py` in plain mode (no TLS, no
/// AUTH) on a port of 127.0.0.1 chosen by the test — a relay that comes back on the port where
/// nothing answered before — writing what it accepts into a Maildir of its own. Stopped by `stop()`.
final class PlainSink: @unchecked Sendable {
    /// Its port.
    let port: Int
    /// Where it writes (`deliveries.jsonl`, `events.jsonl`).
    let maildir: String
    private let process: Process

    /// Starts it on `port` and waits until it listens.
    init(port: Int) throws {
        self.port = port
        maildir = "/var/tmp/sn-sink-" + UUID().uuidString.lowercased().prefix(8)
        try FileManager.default.createDirectory(atPath: maildir, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [TestEnvironment.root.appendingPathComponent("scripts/testenv/smtp_server.py").path,
                             "--host", "127.0.0.1", "--port", String(port), "--mode", "plain", "--maildir", maildir]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while !Postfix.listening(port) {
            guard Date() < deadline, process.isRunning else { stop(); throw TestFailure("the SMTP sink did not start on \(port)") }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// The recipients (lower-cased) of what it accepted, in order.
    var recipients: [String] {
        Mailbox.deliveries(maildir: maildir, mentioning: "@") { _ in true }.map(\.recipient)
    }

    /// Stops it (SIGKILL: spawned from the test process, it may have inherited a blocked SIGTERM)
    /// and removes its Maildir.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: maildir)
    }
}
