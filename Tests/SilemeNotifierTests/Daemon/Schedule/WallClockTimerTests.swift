import Foundation
import Glibc
import Testing
@testable import Daemon

/// `WallClockTimer` against the real kernel. Timing bounds are deliberately loose (lower bounds
/// plus generous upper bounds) because the test machines are shared and noisy; serialized so
/// the blocking waits do not compete with each other.
///
/// `.clockChanged` is not exercised end to end: it needs the wall clock to be set, which needs
/// root and would disturb the machine. Its parts are covered instead: every wait arms the
/// realtime timerfd with `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET` (so the kernel accepting
/// those flags is tested by every test here), and the decision made after `read` fails with
/// `ECANCELED` is tested through `reasonAfterClockChange(now:deadline:)`. The kernel side
/// (fs/timerfd.c: `timerfd_clock_was_set` marks such timers cancelled and wakes pollers when
/// the realtime-minus-monotonic offset changed, on clock set and via `timerfd_resume` on
/// resume; `read` then returns `ECANCELED`) is documented kernel behaviour since Linux 3.0.
@Suite("WallClockTimer", .serialized)
struct WallClockTimerTests {
    /// Monotonic seconds elapsed while running `body`.
    private func timed<T>(_ body: () -> T) -> (result: T, seconds: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = body()
        let elapsed = clock.now - start
        return (result, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    @Test("a deadline 0.3 s ahead returns .deadlineReached after at least 0.3 s")
    func deadlineReached() throws {
        let timer = try WallClockTimer()
        let deadline = Date() + 0.3
        let (reason, seconds) = timed { timer.wait(until: deadline, orAtMost: 10) }
        #expect(reason == .deadlineReached)
        #expect(seconds >= 0.29)
        #expect(seconds < 3)
        // The wall clock really is past the deadline (1 ms slack for Date's Double rounding).
        #expect(Date() >= deadline - 0.001)
    }

    @Test("orAtMost: 0.1 with a deadline 5 s ahead returns .intervalElapsed after about 0.1 s")
    func intervalElapsed() throws {
        let timer = try WallClockTimer()
        let (reason, seconds) = timed { timer.wait(until: Date() + 5, orAtMost: 0.1) }
        #expect(reason == .intervalElapsed)
        #expect(seconds >= 0.099)
        #expect(seconds < 3)
    }

    @Test("cancel() from another thread returns .cancelled promptly")
    func cancelFromAnotherThread() throws {
        let timer = try WallClockTimer()
        Thread.detachNewThread {
            usleep(200_000)
            timer.cancel()
        }
        let (reason, seconds) = timed { timer.wait(until: Date() + 30, orAtMost: 30) }
        #expect(reason == .cancelled)
        #expect(seconds >= 0.15)
        #expect(seconds < 3)
    }

    @Test("a deadline already in the past returns .deadlineReached at once")
    func pastDeadline() throws {
        let timer = try WallClockTimer()
        for deadline in [Date() - 1, Date() - 86_400 * 365, Date(timeIntervalSince1970: 0), Date.distantPast] {
            let (reason, seconds) = timed { timer.wait(until: deadline, orAtMost: 10) }
            #expect(reason == .deadlineReached, "\(deadline)")
            #expect(seconds < 1)
        }
    }

    @Test("a cancel before the wait interrupts that wait once; the next wait runs normally")
    func cancelBeforeWait() throws {
        let timer = try WallClockTimer()
        timer.cancel()
        timer.cancel()
        let (first, firstSeconds) = timed { timer.wait(until: Date() + 30, orAtMost: 30) }
        #expect(first == .cancelled)
        #expect(firstSeconds < 1)
        // Consumed: the next wait is not cancelled, and a later cancel wins over a passed deadline.
        #expect(timer.wait(until: Date() + 5, orAtMost: 0.05) == .intervalElapsed)
        timer.cancel()
        #expect(timer.wait(until: Date() - 1, orAtMost: 0) == .cancelled)
    }

    @Test("a timer can be reused; an earlier expiry does not leak into the next wait")
    func reuse() throws {
        let timer = try WallClockTimer()
        #expect(timer.wait(until: Date() + 5, orAtMost: 0.05) == .intervalElapsed)
        #expect(timer.wait(until: Date() - 1, orAtMost: 5) == .deadlineReached)
        let (again, seconds) = timed { timer.wait(until: Date() + 5, orAtMost: 0.05) }
        #expect(again == .intervalElapsed)
        #expect(seconds >= 0.049)
        #expect(timer.wait(until: Date() + 0.05, orAtMost: 5) == .deadlineReached)
    }

    @Test("edge arguments: zero interval, no deadline")
    func edgeArguments() throws {
        let timer = try WallClockTimer()
        let (zero, zeroSeconds) = timed { timer.wait(until: Date() + 5, orAtMost: 0) }
        #expect(zero == .intervalElapsed)
        #expect(zeroSeconds < 1)
        // With the deadline past as well, the deadline takes precedence.
        #expect(timer.wait(until: Date() - 1, orAtMost: 0) == .deadlineReached)
        #expect(timer.wait(until: .distantFuture, orAtMost: 0.05) == .intervalElapsed)
        #expect(timer.wait(until: Date() + 0.05, orAtMost: .infinity) == .deadlineReached)
    }

    @Test("after ECANCELED the reason depends on whether the clock is past the deadline")
    func reasonAfterClockChange() {
        let deadline = timespec(tv_sec: 1_778_374_800, tv_nsec: 500)
        let before = timespec(tv_sec: 1_778_374_799, tv_nsec: 999_999_999)
        let sameSecondBefore = timespec(tv_sec: 1_778_374_800, tv_nsec: 499)
        let after = timespec(tv_sec: 1_778_374_801, tv_nsec: 0)
        #expect(WallClockTimer.reasonAfterClockChange(now: before, deadline: deadline) == .clockChanged)
        #expect(WallClockTimer.reasonAfterClockChange(now: sameSecondBefore, deadline: deadline) == .clockChanged)
        #expect(WallClockTimer.reasonAfterClockChange(now: deadline, deadline: deadline) == .deadlineReached)
        #expect(WallClockTimer.reasonAfterClockChange(now: after, deadline: deadline) == .deadlineReached)
    }

    @Test("seconds convert to timespec rounding up; never a disarming all-zero value")
    func timespecConversion() throws {
        func pair(_ seconds: Double) -> [Int]? {
            WallClockTimer.timespec(forSeconds: seconds).map { [$0.tv_sec, $0.tv_nsec] }
        }
        #expect(pair(1.5) == [1, 500_000_000])
        #expect(pair(1_778_374_800) == [1_778_374_800, 0])
        #expect(pair(0.1)?[0] == 0)
        #expect(try #require(pair(0.1))[1] >= 100_000_000)
        #expect(pair(0) == [0, 1])
        #expect(pair(-5) == [0, 1])
        #expect(pair(.nan) == [0, 1])
        #expect(pair(-.infinity) == [0, 1])
        #expect(pair(.infinity) == nil)
        #expect(pair(1e12) == nil)
        #expect(pair(Date.distantFuture.timeIntervalSince1970) == nil) // year 4001: "never"
    }

    @Test("descriptors are closed when the timer is released")
    func noDescriptorLeak() throws {
        func openDescriptors() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        }
        let before = try openDescriptors()
        for _ in 0..<300 {
            let timer = try WallClockTimer()
            #expect(timer.wait(until: Date() - 1, orAtMost: 1) == .deadlineReached)
        }
        // Leaking would add 900; allow for other tests' descriptors coming and going.
        #expect(try openDescriptors() - before < 100)
    }

    @Test("two threads waiting on one timer at once is a programming error")
    func concurrentWaitTraps() async {
        await #expect(processExitsWith: .failure) {
            let timer = try WallClockTimer()
            Thread.detachNewThread { _ = timer.wait(until: Date() + 30, orAtMost: 30) }
            usleep(200_000)
            _ = timer.wait(until: Date() + 30, orAtMost: 30)
        }
    }
}
