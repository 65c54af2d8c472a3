import Dispatch
import Foundation
import Values

/// SIGTERM/SIGINT raise the process's one stop signal (every wait hears it: the daemon, `--run-now`
/// and `retry` finish the mails in flight and exit); SIGHUP reloads the daemon's configuration.
/// Handled on a private dispatch queue rather than in an async-signal context.
enum SignalHandlers {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// Routes SIGTERM and SIGINT to `stop`, and SIGHUP to `reload` when given.
    static func install(stop: StopSignal, reload: (@Sendable () -> Void)? = nil) {
        let queue = DispatchQueue(label: "sileme-notifier.signals")
        var actions: [(Int32, @Sendable () -> Void)] = [(SIGTERM, { stop.stop() }), (SIGINT, { stop.stop() })]
        if let reload { actions.append((SIGHUP, reload)) }
        for (number, action) in actions {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: action)
            source.resume()
            sources.append(source)
        }
    }
}
