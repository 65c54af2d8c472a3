import ArgumentParser
import Config
import Foundation
import Logging
import Store
import Values

/// Standard-error output and the mapping of errors to exit codes (docs/interfaces.md).
enum Console {
    /// Writes one line to standard error.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Runs `body` and exits with the status it returns, or with the status its error means:
    /// 78 for configuration, 69 for an unreachable server, 1 otherwise.
    static func exitOnFailure(_ body: () throws -> ExitStatus) throws {
        let status: ExitStatus
        do {
            status = try body()
        } catch let error as ConfigurationError {
            Console.error("sileme-notifier: \(error)")
            status = .configuration
        } catch let error as DatabaseError {
            Console.error("sileme-notifier: \(error)")
            status = error.kind == .unreachable ? .unavailable : .failure
        } catch {
            Console.error("sileme-notifier: \(error)")
            status = .failure
        }
        if status != .success { throw ExitCode(status.rawValue) }
    }

    /// The run lock for a command that sends (`--run-now`, `retry`, `release`): waits while
    /// another run holds it, saying so and naming the holder, for at most
    /// `RunLock.commandWaitSeconds`; nil — after telling the operator that `nothing` happened —
    /// when SIGTERM or SIGINT came while it waited, or when the bound passed (exit 75 either way:
    /// the work stays due for the holder's run or the next one).
    static func takeRunLock(_ configuration: NotifierConfiguration, stop: StopSignal, logger: Logger,
                            otherwise nothing: String) throws -> RunLock? {
        do {
            guard let lock = try RunLock.take(for: configuration.database, leaseSeconds: configuration.claimLeaseSeconds,
                                              waiting: .upTo(RunLock.commandWaitSeconds, stop, say: { logger.notice("\($0)") })) else {
                error("stopped while waiting for another run to finish; \(nothing)")
                return nil
            }
            return lock
        } catch let exceeded as BoundedWait.Exceeded {
            error("sileme-notifier: \(exceeded); \(nothing)")
            return nil
        }
    }
}
