import Admin
import ArgumentParser

/// `sileme-notifier check`: validates the configuration and reaches the database and the mail server.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate the configuration, reach the database and the mail server, and say what is wrong.")

    @OptionGroup var common: CommonOptions

    func run() throws {
        let configuration = try common.loadConfiguration()
        let (findings, status) = HealthCheck(configuration: configuration).run()
        for finding in findings {
            Console.error("\(finding.ok ? (finding.warning ? "warn" : "ok  ") : "FAIL") \(finding.subject): \(finding.detail)")
        }
        if status != .success { throw ExitCode(status.rawValue) }
    }
}
