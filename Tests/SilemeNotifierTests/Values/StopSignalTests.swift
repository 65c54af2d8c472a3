import Foundation
import Glibc
import Testing
@testable import Values
@testable import Daemon

/// The one stop signal: every kind of wait built on it returns soon after it is raised.
@Suite("StopSignal")
struct StopSignalTests {
    @Test("a sleep runs its whole time when nothing stops it, and says so")
    func fullSleep() {
        let start = Date()
        #expect(StopSignal().sleep(0.2))
        #expect(Date().timeIntervalSince(start) >= 0.19)
    }

    @Test("a long sleep ends when the signal is raised from another thread; later sleeps end at once")
    func stoppedSleep() {
        let stop = StopSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { stop.stop() }
        let start = Date()
        #expect(!stop.sleep(300))
        let waited = Date().timeIntervalSince(start)
        #expect(waited >= 0.15 && waited < 5, "waited \(waited) s")
        #expect(stop.isStopped)
        #expect(!stop.sleep(300))
        #expect(!stop.sleep(300, alive: {}))
        stop.stop()
        #expect(stop.secondsSinceStop.map { $0 >= 0 } == true)
    }

    @Test("the sliced sleep calls alive about once a second until the stop")
    func aliveSlices() {
        let stop = StopSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + 2.3) { stop.stop() }
        var pings = 0
        let start = Date()
        #expect(!stop.sleep(300, alive: { pings += 1 }))
        let elapsed = Date().timeIntervalSince(start)
        // One ping per whole second slept (the machine may be slow: compare with what passed).
        #expect(pings >= 1 && Double(pings) <= elapsed + 0.01 && Double(pings) >= elapsed - 1.01, "\(pings) pings in \(elapsed) s")
    }

    @Test("its descriptor becomes readable when raised, also when taken after the stop")
    func descriptor() {
        func readable(_ fd: Int32) -> Bool {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) == 1
        }
        let stop = StopSignal()
        #expect(!readable(stop.descriptor))
        stop.stop()
        #expect(readable(stop.descriptor))
        let late = StopSignal()
        late.stop()
        #expect(readable(late.descriptor))
    }

    @Test("a task's wait ends when the signal is raised, and at once after; every waiting task hears it")
    func taskWait() async {
        let stop = StopSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { stop.stop() }
        let start = Date()
        async let first: Void = stop.stopped()
        async let second: Void = stop.stopped()
        _ = await (first, second)
        // Not before the stop (how soon after depends on the shared pool's threads being free:
        // the other suites' tests block them).
        #expect(Date().timeIntervalSince(start) >= 0.15)
        #expect(stop.isStopped)
        await stop.stopped()
    }

    @Test("the daemon's wall-clock wait hears it: a wait of an hour returns .cancelled at once")
    func wallClockWait() throws {
        let stop = StopSignal()
        let timer = try WallClockTimer(stop: stop)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { stop.stop() }
        let start = Date()
        #expect(timer.wait(until: Date() + 3600, orAtMost: 3600) == .cancelled)
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(timer.wait(until: Date() + 3600, orAtMost: 3600) == .cancelled, "stays stopped")
    }
}
