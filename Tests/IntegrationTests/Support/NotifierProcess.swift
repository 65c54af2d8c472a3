import Foundation

/// Runs the real `sileme-notifier` executable (the one `swift build` made) against the test
/// servers, the way an operator or systemd would.
struct NotifierProcess {
    /// The executable: `SILEME_BIN`, else `.build/debug/sileme-notifier` in the repository.
    static let executable: String = ProcessInfo.processInfo.environment["SILEME_BIN"]
        ?? TestEnvironment.root.appendingPathComponent(".build/debug/sileme-notifier").path

    /// What a finished run left.
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        let pid: Int32
        /// When `start` launched it (nil for a process started elsewhere) and when it was reaped:
        /// the journal's entries of `pid` between the two are this process's, whatever process
        /// had the pid before or after (a CI run goes through every pid more than once).
        let started: Date?
        let finished: Date
    }

    /// Launch times of the processes `start` made, by pid, until `finish` reaps them.
    nonisolated(unsafe) private static var launched: [Int32: Date] = [:]
    private static let launchedLock = NSLock()

    /// The settings of a run against `database` and the STARTTLS test server; `overrides` replace
    /// or add variables (a nil value removes one).
    static func environment(database: TestDatabase, _ overrides: [String: String?] = [:]) throws -> [String: String] {
        let env = try TestEnvironment.require()
        var values: [String: String] = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "DATABASE_URL": database.url,
            "SMTP_HOST": "localhost", "SMTP_PORT": env.starttlsPort, "SMTP_TLS": "starttls",
            "SMTP_USER": env.smtpUser, "SMTP_PASSWORD": env.smtpPassword, "SMTP_CA_FILE": env.caFile,
            "FROM_EMAIL": "noreply@sileme.app", "SMTP_RETRY_BACKOFF_SECONDS": "0.1", "SMTP_TIMEOUT_SECONDS": "10",
            "MIGRATIONS_DIR": TestDatabase.migrationsDirectory,
            // The suites of the alert count its mails; the lifecycle suite turns introductions on.
            "INTRODUCE_CONTACTS": "off",
        ]
        for (key, value) in overrides { values[key] = value }
        return values
    }

    /// Starts the executable with `arguments` and `environment`; the caller waits or kills.
    /// `wrapper` (a program and its arguments, such as `prlimit --nofile=1024:1024 --`) execs it.
    static func start(_ arguments: [String], environment: [String: String], wrapper: [String] = []) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: wrapper.first ?? executable)
        process.arguments = wrapper.isEmpty ? arguments : Array(wrapper.dropFirst()) + [executable] + arguments
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let started = Date()
        try process.run()
        launchedLock.withLock { launched[process.processIdentifier] = started }
        return (process, out, err)
    }

    /// Runs to completion and returns status and output.
    static func run(_ arguments: [String], environment: [String: String]) throws -> Result {
        let (process, out, err) = try start(arguments, environment: environment)
        return finish(process, out, err)
    }

    /// Reads both pipes to the end and waits for the exit.
    static func finish(_ process: Process, _ out: Pipe, _ err: Pipe) -> Result {
        let group = DispatchGroup()
        nonisolated(unsafe) var stdout = Data(), stderr = Data()
        DispatchQueue.global().async(group: group) { stdout = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { stderr = err.fileHandleForReading.readDataToEndOfFile() }
        group.wait()
        process.waitUntilExit()
        let started = launchedLock.withLock { launched.removeValue(forKey: process.processIdentifier) }
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self), pid: process.processIdentifier,
                      started: started, finished: Date())
    }
}
