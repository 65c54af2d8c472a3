import Foundation

/// Headless Chromium (Debian's `chromium` package) for the tests that check how the HTML report
/// renders: a screenshot of the page, and the DOM the browser built from it.
enum Chromium {
    /// The browser: `CHROMIUM` if set, else the first of the usual paths that exists.
    static let executable: String? = {
        let candidates = [ProcessInfo.processInfo.environment["CHROMIUM"], "/usr/bin/chromium", "/usr/bin/chromium-browser"]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Whether the rendering tests can run.
    static var available: Bool { executable != nil }

    /// Takes a screenshot of the page `html` (a file) into `png`, `width`×`height` CSS pixels at
    /// scale 1, without scrollbars.
    static func screenshot(of html: String, to png: String, width: Int, height: Int) throws {
        let result = try run(["--screenshot=\(png)", "--window-size=\(width),\(height)", "--hide-scrollbars",
                              "--force-device-scale-factor=1", "file://\(html)"])
        guard FileManager.default.fileExists(atPath: png) else {
            throw TestFailure("chromium wrote no screenshot (exit \(result.status)): \(result.stderr.suffix(2000))")
        }
    }

    /// The DOM Chromium built from the page `html` (a file), serialised.
    static func dumpDOM(of html: String) throws -> String {
        let result = try run(["--dump-dom", "file://\(html)"])
        guard result.status == 0 else { throw TestFailure("chromium --dump-dom failed: \(result.stderr.suffix(2000))") }
        return result.stdout
    }

    /// Takes a screenshot of `url` (a page a server serves) into `png`, with the browser's
    /// `extra` switches (`--accept-lang=…`, `--blink-settings=scriptEnabled=false`).
    static func screenshot(url: String, to png: String, width: Int, height: Int, extra: [String]) throws {
        let result = try run(extra + ["--screenshot=\(png)", "--window-size=\(width),\(height)", "--hide-scrollbars",
                                      "--force-device-scale-factor=1", url])
        guard FileManager.default.fileExists(atPath: png) else {
            throw TestFailure("chromium wrote no screenshot (exit \(result.status)): \(result.stderr.suffix(2000))")
        }
    }

    /// The DOM Chromium built from `url`, with the browser's `extra` switches.
    static func dumpDOM(url: String, extra: [String]) throws -> String {
        let result = try run(extra + ["--dump-dom", url])
        guard result.status == 0 else { throw TestFailure("chromium --dump-dom failed: \(result.stderr.suffix(2000))") }
        return result.stdout
    }

    /// Runs the browser headless with a throwaway profile; killed after `timeout` seconds.
    private static func run(_ arguments: [String], timeout: TimeInterval = 90) throws -> (status: Int32, stdout: String, stderr: String) {
        guard let executable else { throw TestFailure("chromium is not installed") }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("sn-chromium-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        // --no-sandbox: the tests run as root, where Chromium's sandbox refuses to start.
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                             "--user-data-dir=\(profile)"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = profile
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = DispatchTime.now() + timeout
        let finished = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var stdout = Data(), stderr = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { stdout = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { stderr = err.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async { process.waitUntilExit(); finished.signal() }
        if finished.wait(timeout: deadline) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("chromium did not finish within \(Int(timeout)) s")
        }
        group.wait()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }
}
