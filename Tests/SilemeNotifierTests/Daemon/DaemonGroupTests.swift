import Foundation
import Testing
@testable import Daemon
@testable import Values

/// The daemon's one lifecycle (`DaemonGroup`, `ThreadService`, `Startup`) without servers: blocking
/// loops on threads of their own, started together, ended by the one stop signal, and a part that
/// serves not started when the daemon failed to start.
@Suite("DaemonGroup", .timeLimit(.minutes(10)))
struct DaemonGroupTests {
    /// Runs `parts` in a group from a thread that waits for it (as the executable's main thread
    /// does; the test's task waits without holding a thread of the shared pool, which the group needs).
    static func run(_ parts: [ThreadService], stop: StopSignal) async {
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            Thread {
                DaemonGroup.run(parts, stop: stop, logger: .init(label: "test"))
                ended.resume()
            }.start()
        }
    }

    @Test("the stop signal ends every loop and the group; the loops ran side by side")
    func stopEndsAll() async {
        let stop = StopSignal()
        let running = Locked<Set<String>>([])
        let loops = ["sileme-test-a", "sileme-test-b"].map { name in
            ThreadService(name, stop: stop) {
                running.withLock { _ = $0.insert(name) }
                while stop.sleep(3600) {}
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { stop.stop() }
        await Self.run(loops, stop: stop)
        #expect(running.withLock { $0 } == ["sileme-test-a", "sileme-test-b"])
    }

    @Test("a loop that gives up (raising the stop) ends the group, and the others hear it")
    func loopEndsGroup() async {
        let stop = StopSignal()
        let heard = Locked(false)
        let parts = [
            ThreadService("sileme-test-give-up", stop: stop) { stop.stop() },
            ThreadService("sileme-test-other", stop: stop) {
                while stop.sleep(3600) {}
                heard.withLock { $0 = true }
            },
        ]
        await Self.run(parts, stop: stop)
        #expect(heard.withLock { $0 })
    }

    @Test("a part after the start runs once the daemon started, and not at all when it failed to")
    func afterStartup() async {
        for started in [true, false] {
            let stop = StopSignal()
            let startup = Startup()
            let ran = Locked(false)
            let parts = [
                ThreadService("sileme-test-scheduler", stop: stop) {
                    startup.finish(started: started)
                    if !started { stop.stop() }
                    while stop.sleep(3600) {}
                },
                ThreadService("sileme-test-serving", stop: stop, after: startup) {
                    ran.withLock { $0 = true }
                    stop.stop()
                },
            ]
            await Self.run(parts, stop: stop)
            #expect(ran.withLock { $0 } == started)
        }
    }

    @Test("a finished start wakes later waiters at once; the first word counts")
    func startupOnce() async {
        let startup = Startup()
        startup.finish(started: true)
        startup.finish(started: false)
        #expect(await startup.started())
    }
}
