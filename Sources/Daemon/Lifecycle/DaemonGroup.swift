import Dispatch
import Logging
import ServiceLifecycle
import Values

/// The one owner of the daemon's long-lived parts: a `ServiceGroup` that starts them together and
/// stops them gracefully one by one, the last of the list first, behind one stop path
/// (`StopService`). The caller's thread (the executable's main thread) waits for it.
enum DaemonGroup {
    /// Runs `parts` until the stop signal is raised and every part has stopped.
    /// A part returns only when the group asks it to (as `ThreadService` does): one that returned
    /// before its turn would make the group cancel the others.
    static func run(_ parts: [any Service], stop: StopSignal, logger: Logger) {
        var quiet = logger
        quiet.logLevel = .warning  // the group's own start and stop lines
        let services = [ServiceGroupConfiguration.ServiceConfiguration(service: StopService(stop: stop),
                                                                       successTerminationBehavior: .gracefullyShutdownGroup)]
            + parts.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [], logger: quiet))
        let stopped = DispatchSemaphore(value: 0)
        Task {
            do { try await group.run() } catch { logger.error("the daemon's parts ended: \(error)") }
            stopped.signal()
        }
        stopped.wait()
    }

    /// The one stop path between the process's stop signal and the group, both ways: when the
    /// signal is raised (SIGTERM, SIGINT, or the daemon giving up at start) this first service
    /// returns, and the group shuts its parts down gracefully; when the group shuts down for
    /// another reason, its graceful shutdown raises the signal, which every wait hears.
    struct StopService: Service {
        let stop: StopSignal

        func run() async {
            await withGracefulShutdownHandler {
                await stop.stopped()
            } onGracefulShutdown: { [stop] in
                stop.stop()
            }
        }
    }
}
