import ArgumentParser
import Config
import Foundation
import Values

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "The configuration file (KEY=VALUE lines). Default: /etc/sileme-notifier/notifier.conf if it exists; SILEME_CONFIG also names it.")
    var config: String?

    /// The loader for this invocation: `--config`, else `SILEME_CONFIG`, else the default file
    /// when it exists; the process environment on top.
    var loader: ConfigurationLoader {
        let environment = ProcessInfo.processInfo.environment
        let defaultPath = "/etc/sileme-notifier/notifier.conf"
        let path = config ?? environment["SILEME_CONFIG"]
            ?? (FileManager.default.fileExists(atPath: defaultPath) ? defaultPath : nil)
        return ConfigurationLoader(environment: environment, filePath: path)
    }

    /// Loads the configuration, or ends the program with exit code 78 and the setting named.
    func loadConfiguration() throws -> NotifierConfiguration {
        do {
            return try loader.load()
        } catch {
            Console.error("sileme-notifier: \(error)")
            throw ExitCode(ExitStatus.configuration.rawValue)
        }
    }
}
