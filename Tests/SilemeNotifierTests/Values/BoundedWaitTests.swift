import Foundation
import Testing
@testable import Values

/// A named wait (SPEC §22): quiet while short, says what it waits for and its bound once it has
/// waited a few seconds and then every minute, and ends with an error naming both at its bound.
@Suite("BoundedWait")
struct BoundedWaitTests {
    @Test("the steps: quiet, a notice after 5 s, again every 60 s, giving up at the bound")
    func steps() {
        let wait = BoundedWait("the run lock", bound: 200)
        #expect(wait.step(waited: 0, noticed: nil) == .wait)
        #expect(wait.step(waited: 4.9, noticed: nil) == .wait)
        #expect(wait.step(waited: 5, noticed: nil) == .notice)
        #expect(wait.step(waited: 64, noticed: 5) == .wait)
        #expect(wait.step(waited: 65, noticed: 5) == .notice)
        #expect(wait.step(waited: 200, noticed: 185) == .giveUp)
        #expect(BoundedWait("x", bound: 3).step(waited: 3, noticed: nil) == .giveUp, "a bound shorter than the notice's delay")
    }

    @Test("the notice and the error name the wait and its bound")
    func texts() {
        let wait = BoundedWait("the run lock (notifier_run_lock) held by h:1:a", bound: 1800)
        #expect(wait.notice(waited: 12.4) == "waiting for the run lock (notifier_run_lock) held by h:1:a: 12 s so far, at most 1800 s")
        #expect("\(wait.exceeded)" == "gave up waiting for the run lock (notifier_run_lock) held by h:1:a after 1800 s (its bound)")
    }

    @Test("poll returns what comes, nil on a stop, and throws at the bound with what the wait last learned")
    func poll() throws {
        var asked = 0
        let value = try BoundedWait("a", bound: 5).poll(every: 0.01, stop: StopSignal(), say: { _ in }) { _ -> Int? in
            asked += 1
            return asked == 3 ? 42 : nil
        }
        #expect(value == 42)
        let stop = StopSignal()
        stop.stop()
        #expect(try BoundedWait("a", bound: 5).poll(every: 0.01, stop: stop, say: { _ in }) { _ -> Int? in nil } == nil)
        let started = Date()
        #expect {
            _ = try BoundedWait("a", bound: 0.3).poll(every: 0.05, stop: StopSignal(), say: { _ in }) { wait -> Int? in
                wait.what = "the holder h:2:b"
                return nil
            }
        } throws: { error in
            (error as? BoundedWait.Exceeded)?.what == "the holder h:2:b"
        }
        #expect(Date().timeIntervalSince(started) < 1, "ends at its bound")
    }
}
