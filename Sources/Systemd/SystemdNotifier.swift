import CSystemd
import Foundation

/// The sd_notify protocol towards systemd: `READY=1`, `STATUS=…`, `WATCHDOG=1`, `RELOADING=1`,
/// `STOPPING=1`. Does nothing (and costs nothing) when `NOTIFY_SOCKET` is not set.
package struct SystemdNotifier: Sendable {
    /// Whether a notification socket was given (the process runs under `Type=notify`).
    package let enabled: Bool
    /// Half of `WatchdogSec` when systemd expects watchdog pings from this process, else nil.
    package let watchdogPingInterval: TimeInterval?

    /// Reads `NOTIFY_SOCKET` and `WATCHDOG_USEC`/`WATCHDOG_PID` (through `sd_watchdog_enabled`).
    package init() {
        enabled = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] != nil
        var usec: UInt64 = 0
        if sd_watchdog_enabled(0, &usec) > 0, usec > 0 {
            watchdogPingInterval = TimeInterval(usec) / 2_000_000
        } else {
            watchdogPingInterval = nil
        }
    }

    /// Sends `state` (newline-separated `KEY=VALUE` assignments).
    package func notify(_ state: String) {
        guard enabled else { return }
        _ = sd_notify(0, state)
    }

    /// `READY=1` with a status line.
    package func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }

    /// `STATUS=…`.
    package func status(_ text: String) { notify("STATUS=\(text)") }

    /// `WATCHDOG=1`.
    package func watchdog() { notify("WATCHDOG=1") }

    /// `RELOADING=1` with the monotonic timestamp systemd 253+ wants (harmless on 252).
    package func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        notify("RELOADING=1\nMONOTONIC_USEC=\(usec)\nSTATUS=reloading configuration")
    }

    /// `STOPPING=1`.
    package func stopping(status: String) { notify("STOPPING=1\nSTATUS=\(status)") }
}
