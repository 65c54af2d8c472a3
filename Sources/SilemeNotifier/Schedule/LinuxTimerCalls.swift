import Glibc

/// The Linux `timerfd` and `eventfd` calls and constants, which Swift's `Glibc` module does
/// not import (`<sys/timerfd.h>` and `<sys/eventfd.h>` are not part of its module map).
///
/// The functions are looked up once with `dlsym` in the already-loaded C library and called
/// through `@convention(c)` pointers, which gives the real C calling convention without a C
/// target in the package. The flag values are fixed by the kernel ABI.
enum LinuxTimerCalls {
    /// `TFD_TIMER_ABSTIME` (`1 << 0` in `<sys/timerfd.h>`): `it_value` is an absolute time on
    /// the timer's clock.
    static let timerAbsoluteTime: Int32 = 1 << 0
    /// `TFD_TIMER_CANCEL_ON_SET` (`1 << 1` in `<sys/timerfd.h>`): with an absolute
    /// `CLOCK_REALTIME` timer, `read` fails with `ECANCELED` once the clock is set
    /// discontinuously.
    static let timerCancelOnSet: Int32 = 1 << 1
    /// `TFD_CLOEXEC` / `EFD_CLOEXEC`, defined by the kernel as `O_CLOEXEC`.
    static let closeOnExec = Int32(O_CLOEXEC)
    /// `TFD_NONBLOCK` / `EFD_NONBLOCK`, defined by the kernel as `O_NONBLOCK`.
    static let nonBlocking = Int32(O_NONBLOCK)

    /// `int timerfd_create(clockid_t clockid, int flags)`.
    typealias TimerCreate = @convention(c) (Int32, Int32) -> Int32
    /// `int timerfd_settime(int fd, int flags, const struct itimerspec *new, struct itimerspec *old)`.
    typealias TimerSetTime = @convention(c) (Int32, Int32, UnsafePointer<itimerspec>?,
                                            UnsafeMutablePointer<itimerspec>?) -> Int32
    /// `int eventfd(unsigned int initval, int flags)`.
    typealias EventCreate = @convention(c) (UInt32, Int32) -> Int32

    /// `timerfd_create`, resolved once (static `let`s are initialised lazily and thread-safely).
    private static let timerCreateFunction = unsafeBitCast(lookUp("timerfd_create"), to: TimerCreate.self)
    /// `timerfd_settime`, resolved once.
    private static let timerSetTimeFunction = unsafeBitCast(lookUp("timerfd_settime"), to: TimerSetTime.self)
    /// `eventfd`, resolved once.
    private static let eventCreateFunction = unsafeBitCast(lookUp("eventfd"), to: EventCreate.self)

    /// Looks up a C library function by name; traps if the C library lacks it (glibc has had
    /// all three since 2.8; the kernel supports `TFD_TIMER_CANCEL_ON_SET` since Linux 3.0).
    private static func lookUp(_ name: String) -> UnsafeMutableRawPointer {
        // A null handle is RTLD_DEFAULT: search the libraries already loaded into the process.
        guard let symbol = dlsym(nil, name) else {
            fatalError("\(name) not found in the C library")
        }
        return symbol
    }

    /// Calls `timerfd_create`; returns the new descriptor or -1 with `errno` set.
    static func timerCreate(clock: clockid_t, flags: Int32) -> Int32 {
        timerCreateFunction(Int32(clock), flags)
    }

    /// Calls `timerfd_settime` without asking for the old value; returns 0 or -1 with `errno` set.
    static func timerSetTime(_ fd: Int32, flags: Int32, _ value: itimerspec) -> Int32 {
        withUnsafePointer(to: value) { timerSetTimeFunction(fd, flags, $0, nil) }
    }

    /// Calls `eventfd`; returns the new descriptor or -1 with `errno` set.
    static func eventCreate(initialValue: UInt32, flags: Int32) -> Int32 {
        eventCreateFunction(initialValue, flags)
    }
}
