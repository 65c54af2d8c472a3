import CShims
import Foundation
import Glibc
import Values

/// Blocks the calling thread until an absolute wall-clock deadline, waking early when the
/// wall clock is stepped, when a watchdog interval elapses, or when cancelled.
///
/// ## Why a `timerfd` with `TFD_TIMER_CANCEL_ON_SET` instead of sleeping `deadline - now`
///
/// Sleeping a computed interval (`Thread.sleep`, `nanosleep`, `Task.sleep`,
/// `DispatchQueue.asyncAfter`) measures that interval on `CLOCK_MONOTONIC`, which is wrong
/// for a job tied to the wall clock:
///
/// * **Wall-clock steps go unnoticed.** If the clock is stepped while sleeping — NTP's first
///   sync after booting a machine without a battery-backed clock, `date -s`, a VM restored
///   from a snapshot — the sleep still ends after the originally computed interval, so the
///   job runs early or late by the size of the step (hours, or on the wrong day).
/// * **Suspend stops the monotonic clock.** `CLOCK_MONOTONIC` does not advance while the
///   machine is suspended, so after a resume the sleep still has its whole pre-suspend
///   remainder to go and the job runs late by the time spent suspended.
///
/// A `CLOCK_REALTIME` timerfd armed with `TFD_TIMER_ABSTIME` instead expires when the wall
/// clock *reads* the deadline, whatever happened in between; the kernel re-evaluates it when
/// the clock is set. `TFD_TIMER_CANCEL_ON_SET` additionally makes the kernel report every
/// discontinuous change of `CLOCK_REALTIME` (`clock_settime`/`settimeofday`, `adjtimex`
/// offset steps, leap seconds, and resume from suspend — `timekeeping_resume` calls
/// `timerfd_resume`, which cancels such timers because the realtime–monotonic offset
/// changed): `poll` wakes and `read` fails with `ECANCELED`, so the caller can recompute
/// which date's fire is next. A resume after the deadline thus shows up as the deadline
/// already being past.
///
/// ## How a wait ends
///
/// `wait(until:orAtMost:)` polls three descriptors: the realtime timerfd, a relative
/// `CLOCK_MONOTONIC` timerfd for `maxInterval` (so the caller can send systemd watchdog pings
/// while waiting for a deadline hours away) and an `eventfd` that `cancel()` writes to.
///
/// ## Threads
///
/// One thread at a time may call `wait(until:orAtMost:)` (a concurrent second call traps);
/// `cancel()` may be called from any thread at any time — its `eventfd` write is the only
/// descriptor use from another thread. So the class is Sendable, and checked: its one changing
/// value (the "someone is waiting" flag) is `Locked`, and the descriptors are immutable numbers,
/// closed only in `deinit`.
package final class WallClockTimer: Sendable {
    /// Why `wait(until:orAtMost:)` returned. When several apply, the first listed wins.
    package enum WakeReason: Sendable, Equatable {
        /// `cancel()` was called (during this wait or since the previous one).
        case cancelled
        /// The wall clock has reached the deadline (also when it was already past when the
        /// wait began, or got past it through a clock step or a resume from suspend).
        case deadlineReached
        /// The wall clock was changed discontinuously and is still before the deadline:
        /// recompute the deadline (the next fire may now be a different date) and wait again.
        case clockChanged
        /// `maxInterval` of monotonic time elapsed first: do periodic work (such as a
        /// watchdog ping) and wait again.
        case intervalElapsed
    }

    /// A system call that failed while creating the timer's descriptors.
    package struct SystemCallError: Error, Equatable, CustomStringConvertible {
        /// The failing call, e.g. `timerfd_create`.
        package let call: String
        /// The `errno` it set.
        package let code: Int32

        /// Creates an error for `call` failing with `code`.
        package init(call: String, code: Int32) {
            self.call = call
            self.code = code
        }

        /// `call: strerror(code)`.
        package var description: String {
            "\(call): \(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// `CLOCK_REALTIME` timerfd, armed for the absolute deadline.
    private let deadlineDescriptor: Int32
    /// `CLOCK_MONOTONIC` timerfd, armed for `maxInterval` from the start of a wait.
    private let intervalDescriptor: Int32
    /// `eventfd` that `cancel()` writes to; never read, so it stays readable once written.
    private let cancelDescriptor: Int32
    /// Whether a thread is inside `wait(until:orAtMost:)`.
    private let isWaiting = Locked(false)
    /// The process's stop signal (kept alive with the timer), and its descriptor, readable once
    /// raised (never read or closed here).
    private let stop: StopSignal?
    private let stopDescriptor: Int32?

    /// Creates the timer's three descriptors (close-on-exec, non-blocking). Every wait also ends
    /// (`.cancelled`) once `stop` is raised, and at once while it stays raised.
    ///
    /// - Throws: `SystemCallError` if a descriptor cannot be created (e.g. `EMFILE`).
    package init(stop: StopSignal? = nil) throws {
        self.stop = stop
        stopDescriptor = stop?.descriptor
        let flags = Int32(TFD_CLOEXEC) | Int32(TFD_NONBLOCK)
        let deadline = timerfd_create(CLOCK_REALTIME, flags)
        guard deadline >= 0 else {
            throw SystemCallError(call: "timerfd_create(CLOCK_REALTIME)", code: errno)
        }
        let interval = timerfd_create(CLOCK_MONOTONIC, flags)
        guard interval >= 0 else {
            let error = SystemCallError(call: "timerfd_create(CLOCK_MONOTONIC)", code: errno)
            close(deadline)
            throw error
        }
        let cancel = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard cancel >= 0 else {
            let error = SystemCallError(call: "eventfd", code: errno)
            close(deadline)
            close(interval)
            throw error
        }
        deadlineDescriptor = deadline
        intervalDescriptor = interval
        cancelDescriptor = cancel
    }

    /// Closes the three descriptors.
    deinit {
        close(deadlineDescriptor)
        close(intervalDescriptor)
        close(cancelDescriptor)
    }

    /// Blocks until the wall clock reaches `deadline`, the wall clock is stepped, `maxInterval`
    /// seconds of monotonic time pass, or `cancel()` is called — whichever comes first.
    ///
    /// A deadline already in the past returns `.deadlineReached` at once (unless cancelled).
    /// A non-positive `maxInterval` returns `.intervalElapsed` at once (unless the deadline is
    /// past or the timer cancelled); an infinite one (or beyond year 2255) never elapses, and
    /// likewise for `deadline`, so `Date.distantFuture` waits for cancellation or
    /// `maxInterval` only (clock steps are then not reported). Signals (`EINTR`) are retried.
    ///
    /// - Precondition: no other thread is inside `wait` on this timer.
    package func wait(until deadline: Date, orAtMost maxInterval: TimeInterval) -> WakeReason {
        isWaiting.withLock { waiting in
            precondition(!waiting, "WallClockTimer.wait called from two threads at once")
            waiting = true
        }
        defer { isWaiting.withLock { $0 = false } }

        let absoluteDeadline = Self.timespec(forSeconds: deadline.timeIntervalSince1970)
        arm(deadlineDescriptor, at: absoluteDeadline,
            flags: Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET))
        arm(intervalDescriptor, at: Self.timespec(forSeconds: maxInterval), flags: 0)

        var descriptors = [cancelDescriptor, deadlineDescriptor, intervalDescriptor, stopDescriptor ?? -1].map {
            pollfd(fd: $0, events: Int16(POLLIN), revents: 0)
        }
        while true {
            let ready = descriptors.withUnsafeMutableBufferPointer {
                poll($0.baseAddress, nfds_t($0.count), -1)
            }
            if ready < 0 {
                let code = errno
                if code == EINTR { continue }
                fatalError("poll failed: \(SystemCallError(call: "poll", code: code))")
            }
            if descriptors[3].revents != 0 { return .cancelled }  // stopped: level-triggered, not consumed
            if descriptors[0].revents != 0 {
                // Consume the wake-up: a cancel interrupts one wait, not every later one (the
                // daemon uses it for both stop and reload, and re-checks its flags after a wake).
                var counter: UInt64 = 0
                _ = withUnsafeMutableBytes(of: &counter) { read(cancelDescriptor, $0.baseAddress, $0.count) }
                return .cancelled
            }
            if descriptors[1].revents != 0, let absoluteDeadline {
                switch readExpirations(deadlineDescriptor) {
                case .expired:
                    return .deadlineReached
                case .clockChanged:
                    return Self.reasonAfterClockChange(now: Self.currentRealtime(), deadline: absoluteDeadline)
                case .notReady:
                    break
                }
            }
            if descriptors[2].revents != 0, readExpirations(intervalDescriptor) == .expired {
                // Both timers may have expired with only the interval seen by this poll (e.g. a
                // past deadline and a zero interval): the deadline takes precedence.
                if let absoluteDeadline,
                   Self.reasonAfterClockChange(now: Self.currentRealtime(), deadline: absoluteDeadline) == .deadlineReached {
                    return .deadlineReached
                }
                return .intervalElapsed
            }
            for index in descriptors.indices {
                descriptors[index].revents = 0
            }
        }
    }

    /// Makes the current or next `wait(until:orAtMost:)` return `.cancelled` promptly, once (that
    /// wait consumes it; several cancels before it count as one). Safe to call from any thread,
    /// any number of times.
    package func cancel() {
        var increment: UInt64 = 1
        // Can only fail with EAGAIN if the counter would overflow, which 2^64 - 2 calls won't.
        _ = withUnsafeBytes(of: &increment) { write(cancelDescriptor, $0.baseAddress, $0.count) }
    }

    // MARK: - Helpers

    /// The outcome of reading a timerfd.
    private enum ReadOutcome: Equatable {
        /// The timer expired at least once.
        case expired
        /// `ECANCELED`: the realtime clock was set discontinuously (`TFD_TIMER_CANCEL_ON_SET`).
        case clockChanged
        /// Nothing to read (`EAGAIN`, e.g. a spurious wake-up) or interrupted.
        case notReady
    }

    /// Reads (and so resets) a timerfd's expiration count.
    private func readExpirations(_ descriptor: Int32) -> ReadOutcome {
        var expirations: UInt64 = 0
        let count = withUnsafeMutableBytes(of: &expirations) { read(descriptor, $0.baseAddress, $0.count) }
        if count == MemoryLayout<UInt64>.size { return .expired }
        let code = errno
        switch code {
        case ECANCELED: return .clockChanged
        case EAGAIN, EINTR: return .notReady
        default: fatalError("read(timerfd) failed: \(SystemCallError(call: "read", code: code))")
        }
    }

    /// Arms `descriptor` to expire once at `value` (disarms it if `nil`).
    private func arm(_ descriptor: Int32, at value: timespec?, flags: Int32) {
        let zero = Glibc.timespec(tv_sec: 0, tv_nsec: 0)
        let specification = itimerspec(it_interval: zero, it_value: value ?? zero)
        guard withUnsafePointer(to: specification, { timerfd_settime(descriptor, value == nil ? 0 : flags, $0, nil) }) == 0 else {
            fatalError("timerfd_settime failed: \(SystemCallError(call: "timerfd_settime", code: errno))")
        }
    }

    /// The `timespec` for a deadline (seconds since the epoch on `CLOCK_REALTIME`) or an
    /// interval (seconds, relative), rounded up to whole nanoseconds; `nil` for "never"
    /// (infinite, or past year 2255 where the kernel's 64-bit nanosecond time would end).
    /// Zero, negative and NaN become the smallest positive value, because an all-zero
    /// `it_value` would disarm the timer instead of making it expire at once.
    package static func timespec(forSeconds seconds: Double) -> timespec? {
        if seconds >= 9_000_000_000 { return nil }
        guard seconds > 0 else { return Glibc.timespec(tv_sec: 0, tv_nsec: 1) }
        var whole = seconds.rounded(.down)
        var nanoseconds = ((seconds - whole) * 1_000_000_000).rounded(.up)
        if nanoseconds >= 1_000_000_000 {
            whole += 1
            nanoseconds = 0
        }
        if whole == 0 && nanoseconds == 0 { nanoseconds = 1 }
        return Glibc.timespec(tv_sec: Int(whole), tv_nsec: Int(nanoseconds))
    }

    /// `.deadlineReached` if the wall clock `now` is at or after `deadline`, else
    /// `.clockChanged`. Decides what to report when the realtime timerfd was cancelled by a
    /// clock change: the deadline may have been reached anyway (the clock was stepped past it,
    /// or the machine resumed from suspend after it), and then the job is due.
    package static func reasonAfterClockChange(now: timespec, deadline: timespec) -> WakeReason {
        (now.tv_sec, now.tv_nsec) >= (deadline.tv_sec, deadline.tv_nsec) ? .deadlineReached : .clockChanged
    }

    /// The current `CLOCK_REALTIME` time, at the kernel's resolution.
    private static func currentRealtime() -> timespec {
        var now = Glibc.timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }
}
