import Foundation
import ServiceLifecycle
import Values

/// A long-lived part of the daemon whose work blocks (libpq, libcurl, timerfd) as a `Service`
/// of the daemon's group: its loop runs on a thread of its own, bridged to the group's task, and
/// hears the process's one stop signal, which the group's graceful shutdown raises (as SIGTERM
/// does). So a part is written as a plain loop `while !stop.isStopped { … }`, and every wait in
/// it is one the stop signal ends.
///
/// It returns only when the group asks it to (after its loop ended): a service that returns
/// before its turn in the group's shutdown would make the group cancel the others, the page among
/// them (cancelling Hummingbird mid-request crashes NIO).
struct ThreadService: Service {
    /// The thread's name (`sileme-…`, seen in `ps -L` and in a core dump).
    let name: String
    /// The process's stop signal: the loop's end.
    let stop: StopSignal
    /// When given, the loop starts once the daemon has started (said `READY`), and not at all
    /// when it failed to.
    let after: Startup?
    /// The loop: returns once `stop` is raised.
    let loop: @Sendable () -> Void

    init(_ name: String, stop: StopSignal, after: Startup? = nil, loop: @escaping @Sendable () -> Void) {
        self.name = name
        self.stop = stop
        self.after = after
        self.loop = loop
    }

    func run() async {
        await withGracefulShutdownHandler {
            if await after?.started() ?? true {
                await Self.onThread(name, loop)
            }
        } onGracefulShutdown: { [stop] in
            stop.stop()
        }
        try? await gracefulShutdown()
    }

    /// Runs `body` on a new thread named `name`; returns when it has.
    static func onThread(_ name: String, _ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                // Foundation on Linux keeps a name set before `start` to itself: the kernel's
                // name (what `ps -L`, /proc and a core dump show, 15 bytes) is written here.
                try? String(name.prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                body()
                done.resume()
            }
            thread.name = name
            thread.start()
        }
    }
}
