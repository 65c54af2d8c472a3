import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one stop signal of a process: SIGTERM or SIGINT raise it, and every wait of the notifier
/// hears it — the daemon's wall-clock wait, a retry backoff, a database reconnect, the rate
/// limiter, the run lock, a mail server that does not answer. Each returns within about a second
/// of the stop: the mail in flight is finished (or, when its server hangs, given up and recorded
/// for a later retry), nothing new is claimed, and what is left stays due for the next run.
///
/// Threads wait on it with `sleep`, `poll`-based waits on `descriptor`, and libcurl's progress
/// callback reads `isStopped`; tasks (the daemon's service group) with `stopped()`. Safe to use
/// from any thread.
///
/// Sendable unchecked, and it must stay so: its state, the pipe's descriptors and the waiting
/// tasks are all under one `NSCondition`, which the sleeps wait on (a `Mutex` cannot wait); the
/// compiler cannot see that lock.
package final class StopSignal: @unchecked Sendable {
    private let condition = NSCondition()
    private var stoppedAt: Date?
    private var pipe: (read: Int32, write: Int32)?
    /// The tasks waiting in `stopped()`, resumed by `stop()`.
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// A signal that has not been raised.
    package init() {}

    deinit {
        if let pipe {
            close(pipe.read)
            close(pipe.write)
        }
    }

    /// Raises the signal (idempotent): wakes every `sleep` and makes `descriptor` readable.
    package func stop() {
        condition.lock()
        defer { condition.unlock() }
        guard stoppedAt == nil else { return }
        stoppedAt = Date()
        condition.broadcast()
        if let pipe {
            var byte: UInt8 = 1
            _ = write(pipe.write, &byte, 1)
        }
        for task in waiting { task.resume() }
        waiting = []
    }

    /// Returns once the signal is raised (at once when it was): the wait of a task, which holds
    /// no thread meanwhile.
    package func stopped() async {
        await withCheckedContinuation { (task: CheckedContinuation<Void, Never>) in
            condition.lock()
            defer { condition.unlock() }
            if stoppedAt == nil { waiting.append(task) } else { task.resume() }
        }
    }

    /// Whether the signal was raised.
    package var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stoppedAt != nil
    }

    /// Seconds since the signal was raised; nil while it was not.
    package var secondsSinceStop: TimeInterval? {
        condition.lock()
        defer { condition.unlock() }
        return stoppedAt.map { Date().timeIntervalSince($0) }
    }

    /// A file descriptor that becomes readable (and stays so) once the signal is raised, for
    /// waits that `poll` other descriptors too. Owned by the signal; never read it.
    package var descriptor: Int32 {
        condition.lock()
        defer { condition.unlock() }
        if let pipe { return pipe.read }
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { fatalError("pipe failed: errno \(errno)") }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        pipe = (fds[0], fds[1])
        if stoppedAt != nil {
            var byte: UInt8 = 1
            _ = write(fds[1], &byte, 1)
        }
        return fds[0]
    }

    /// Sleeps `seconds`, or less when the signal is raised. Returns true when the whole time
    /// passed, false when the stop came first (or had come already).
    @discardableResult
    package func sleep(_ seconds: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(max(0, seconds))
        condition.lock()
        defer { condition.unlock() }
        while stoppedAt == nil {
            if Date() >= deadline { return true }
            _ = condition.wait(until: deadline)
        }
        return false
    }

    /// `sleep(seconds)` in slices of at most one second, calling `alive` after each slice, so that
    /// a long wait (a retry backoff, a reconnect delay) keeps the daemon's watchdog fed from the
    /// real work loop. Returns false as soon as the signal is raised.
    package func sleep(_ seconds: TimeInterval, alive: () -> Void) -> Bool {
        var left = seconds
        while left > 0 {
            guard sleep(min(1, left)) else { return false }
            left -= 1
            alive()
        }
        return !isStopped
    }
}
