import Foundation
import Testing
import TestSupport
@testable import Values
@testable import Config

/// Issue 6's configuration matrix on the real executable: every case of `BadSetting.all` makes
/// `sileme-notifier --run-now` exit 78 with the setting's name on standard error, given in the
/// environment and (where a file can hold it) in the `--config` file; and every command — the
/// daemon, `check`, `migrate`, `report`, `retry` — refuses a bad configuration the same way.
@Suite("Configuration matrix on the real executable", .enabled(if: TestEnvironment.enabled))
struct ConfigurationIntegrationTests {
    /// One run of the matrix.
    struct Run: Sendable {
        let bad: BadSetting
        let source: String
        let result: NotifierProcess.Result
    }

    @Test("every bad setting: exit 78 and the setting named, from the environment and from --config FILE")
    func matrix() throws {
        let db = try TestDatabase()
        let base = try NotifierProcess.environment(database: db)
        let cases = BadSetting.all(keys: ConfigurationLoader.knownKeys)
        var jobs: [(BadSetting, String, [String], [String: String])] = []
        var files: [String] = []
        defer { for file in files { try? FileManager.default.removeItem(atPath: file) } }
        for bad in cases where !bad.fileOnly {
            var environment = base
            for key in bad.unset { environment[key] = nil }
            environment.merge(bad.values) { $1 }
            jobs.append((bad, "environment", ["--run-now"], environment))
        }
        for bad in cases where !bad.environmentOnly {
            let path = BadSetting.fixtures.directory + "/\(UUID().uuidString).conf"
            try BadSetting.fileText(bad.values).write(toFile: path, atomically: true, encoding: .utf8)
            files.append(path)
            var environment = base
            for key in bad.unset + Array(bad.values.keys) { environment[key] = nil }
            jobs.append((bad, "file", ["--run-now", "--config", path], environment))
        }
        // Two at a time (the machine has two cores); each run is a few tens of milliseconds.
        let runs = Locked<[Run]>([])
        let frozen = jobs
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            for index in stride(from: lane, to: frozen.count, by: 2) {
                let (bad, source, arguments, environment) = frozen[index]
                guard let result = try? NotifierProcess.run(arguments, environment: environment) else { continue }
                runs.withLock { $0.append(Run(bad: bad, source: source, result: result)) }
            }
        }
        let finished = runs.withLock { $0 }
        #expect(finished.count == jobs.count, "every case ran")
        print("Configuration matrix, executable: \(finished.count) runs (\(finished.filter { $0.source == "environment" }.count) "
              + "from the environment, \(finished.filter { $0.source == "file" }.count) from --config FILE)")
        for run in finished {
            #expect(run.result.status == 78 && run.result.stderr.contains(run.bad.setting),
                    "\(run.bad) from the \(run.source): exit \(run.result.status), stderr \(run.result.stderr.suffix(300))")
            #expect(run.result.stdout.isEmpty)
        }
    }

    @Test("the daemon and every subcommand refuse a bad configuration with 78, naming the setting",
          arguments: [[], ["check"], ["migrate"], ["report"], ["retry"], ["retry", "--dry-run"]])
    func everyCommand(arguments: [String]) throws {
        let db = try TestDatabase()
        let base = try NotifierProcess.environment(database: db)
        let badValue = try Self.runBounded(arguments, environment: base.merging(["SMTP_TIMEOUT_SECONDS": "0"]) { $1 })
        #expect(badValue.status == 78 && badValue.stderr.contains("SMTP_TIMEOUT_SECONDS"), "\(arguments): \(badValue.stderr)")
        let path = BadSetting.fixtures.directory + "/\(UUID().uuidString).conf"
        try "NOTIFY_TIME=09:00\nNOTIFY_TIMEZONE=Asia/Shanghai\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let typo = try Self.runBounded(arguments + ["--config", path], environment: base)
        #expect(typo.status == 78 && typo.stderr.contains("NOTIFY_TIMEZONE"), "\(arguments): \(typo.stderr)")
        var noPassword = base
        noPassword["SMTP_PASSWORD"] = nil
        noPassword["SMTP_PASSWORD_FILE"] = BadSetting.fixtures.folder
        let unreadable = try Self.runBounded(arguments, environment: noPassword)
        #expect(unreadable.status == 78 && unreadable.stderr.contains("SMTP_PASSWORD_FILE"), "\(arguments): \(unreadable.stderr)")
    }

    /// Runs the executable; should a regression start the daemon for real, it is stopped after a
    /// minute (a bound on the test, not an assertion).
    static func runBounded(_ arguments: [String], environment: [String: String]) throws -> NotifierProcess.Result {
        let (process, out, err) = try NotifierProcess.start(arguments, environment: environment)
        let guardrail = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: guardrail)
        defer { guardrail.cancel() }
        return NotifierProcess.finish(process, out, err)
    }
}
