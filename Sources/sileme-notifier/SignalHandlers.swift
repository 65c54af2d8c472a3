import Dispatch
import Foundation

/// SIGTERM/SIGINT (stop after the messages in flight) and SIGHUP (reload) for the daemon, handled
/// on a private dispatch queue rather than in an async-signal context.
enum SignalHandlers {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    static func install(stop: @escaping @Sendable () -> Void, reload: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "sileme-notifier.signals")
        for (number, action) in [(SIGTERM, stop), (SIGINT, stop), (SIGHUP, reload)] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: action)
            source.resume()
            sources.append(source)
        }
    }
}
