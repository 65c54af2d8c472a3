import Config
import Foundation
import Logging
import Store
import Systemd
import Texts
import Values

/// The long-running worker: serves every user at their own notify instant (their `time_zone` and
/// `notify_time`, or `NOTIFY_TIME` in `NOTIFY_TIME_ZONE`: docs/user-time.md), looking at the
/// slots again every minute; catches up the instants it missed while it was down (like a
/// timer's `Persistent=true`); retries transient failures until the next instant; survives the
/// database being down; and speaks the systemd notify protocol (`READY`, `STATUS`, `WATCHDOG`,
/// `RELOADING`, `STOPPING`).
///
/// Blocking: `run()` occupies the calling thread until `requestStop()` (or SIGTERM) has stopped
/// every part. `requestStop()` and `requestReload()` may be called from any thread (the signal
/// handlers).
///
/// What it owns, by file:
/// - here: what every part shares — the stop and reload requests, the configuration as the other
///   threads read it, the kept sessions, the timer;
/// - `Daemon+Parts`: the list of the daemon's parts, run by one `ServiceGroup` (`run()`);
/// - `Daemon+StartupCheck`: what must hold before the daemon says `READY`;
/// - `Daemon+Scheduler`: the scheduler's loop and what it alone changes (`Daemon.Scheduler`);
/// - `Daemon+Runs`: a run performed, with its hooks (`STATUS=`, watchdog, heartbeat, back-off,
///   retention); `Daemon+Joining`: joining another daemon's run;
/// - `Daemon+Reload`: SIGHUP; `Daemon+Status`: the waits, the watchdog and `STATUS=`'s words.
///
/// Sendable, and checked so: only `let`s of Sendable types, the changing ones behind a lock
/// (`Locked`). The scheduler's own state is in `Scheduler`, which is not Sendable: the compiler
/// keeps it on the scheduler's thread.
package final class Daemon: Sendable {
    /// Re-reads the configuration (file, environment, credentials) for SIGHUP.
    package typealias ConfigurationSource = @Sendable () throws(ConfigurationError) -> NotifierConfiguration

    /// The configuration the daemon started with: what its parts are made of. A reload changes
    /// the scheduler's (`Scheduler.configuration`) and, through it, `shared`.
    let configuration: NotifierConfiguration
    /// The configuration as the all-clear thread reads it (the scheduler's, after each reload).
    let shared: Locked<NotifierConfiguration>
    /// The database sessions of the scheduler, the runs and the all-clear pass, kept from one use
    /// to the next (a new one per reload of the configuration).
    let keeper: Locked<SessionKeeper>
    var sessions: SessionKeeper { keeper.withLock { $0 } }
    let reloadConfiguration: ConfigurationSource
    let logger: Logger
    let systemd: SystemdNotifier
    let clock: any Clock
    let timer: WallClockTimer
    let host: String
    let stop: StopSignal
    /// Set by `requestReload()` (a signal handler's thread), taken by the scheduler between runs.
    let reloadRequested = Locked(false)
    /// When `WATCHDOG=1` was last sent: the scheduler and a run's threads both ping.
    let lastWatchdogPing = Locked(Date.distantPast)
    /// The page's texts (`page.texts` of the language folders), as the start's check and each
    /// reload loaded them; their default language is the mail templates'.
    let pageTexts: Locked<TextTable>

    /// Creates a daemon with a configuration already loaded and validated. `stop` is the process's
    /// stop signal (raised by `requestStop()` or by the caller's signal handler).
    package init(configuration: NotifierConfiguration, reloadConfiguration: @escaping ConfigurationSource,
                logger: Logger, systemd: SystemdNotifier = SystemdNotifier(), clock: any Clock = SystemClock(),
                host: String = ProcessInfo.processInfo.hostName, stop: StopSignal = StopSignal()) throws {
        self.stop = stop
        self.configuration = configuration
        shared = Locked(configuration)
        keeper = Locked(SessionKeeper(configuration.database, senders: configuration.smtp.connections))
        self.reloadConfiguration = reloadConfiguration
        self.logger = logger
        self.systemd = systemd
        self.clock = clock
        self.host = host
        timer = try WallClockTimer(stop: stop)
        pageTexts = Locked(try TextTable(file: TextTable.page, directory: nil, defaultLanguage: .serviceDefault))
    }

    /// Asks the daemon to stop (raises its stop signal): a run in progress finishes the messages
    /// in flight and records them, every wait returns; then `run()` returns.
    package func requestStop() { stop.stop() }

    /// Asks the daemon to re-read its configuration and templates (between runs): the flag is
    /// taken by the scheduler, and the timer's cancel ends its wait now rather than at the next
    /// look.
    package func requestReload() {
        reloadRequested.withLock { $0 = true }
        timer.cancel()
    }

    var stopRequested: Bool { stop.isStopped }
}
