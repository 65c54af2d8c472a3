import Config
import Delivery
import Foundation
import Logging
import Store
import Systemd
import Values

/// The daemon's all-clear thread (docs/lifecycle.md): a check-in that ends a streak whose alert
/// was accepted is answered within seconds with an all-clear to every contact that got the alert.
///
/// The watcher also folds the check-in queue every second (`CheckInQueue.foldInterval`): the app's
/// check-ins reach the summary that way, and a fold that finds a check-in ending an alerted streak
/// queues the user for an all-clear, returns them (the watcher runs a pass for them at once) and
/// sends `NOTIFY sileme_check_in`. The watcher `LISTEN`s on a direct session —
/// `DATABASE_LISTEN_URL`, or `DATABASE_URL` when that is not a pooler (`PGConnection.isDirect`) —
/// and runs a pass when it hears one (a fold by another daemon, a run or a dry run); it also runs a
/// pass every `ALL_CLEAR_POLL_SECONDS` (the sweep: what was queued while the daemon was down or the
/// connection was broken, retries of earlier all-clears, alerts accepted after the check-in), and
/// once at start. Through a pooler with no listen URL it folds and sweeps. A failed fold or pass is
/// logged and tried again; the daily run never waits for it (claims keep the two apart).
///
/// Sendable, checked: only `let`s of Sendable types. What its loop changes (the connections, the
/// next times, whether the fold fails) are the loop's locals, on the watcher's thread.
final class AllClearWatcher: Sendable {
    private let configuration: @Sendable () -> NotifierConfiguration
    /// The daemon's kept sessions, read before each pass like the configuration.
    private let sessions: @Sendable () -> SessionKeeper?
    private let logger: Logger
    private let host: String
    private let stop: StopSignal

    /// The notification channel of the check-in trigger (migration 010).
    static let channel = "sileme_check_in"

    /// Creates the watcher; `configuration` is read before each pass (SIGHUP reloads it). It never
    /// pings the watchdog: that stays the main loop's proof of life.
    init(configuration: @escaping @Sendable () -> NotifierConfiguration, sessions: @escaping @Sendable () -> SessionKeeper? = { nil },
         logger: Logger, host: String, stop: StopSignal) {
        self.configuration = configuration
        self.sessions = sessions
        self.logger = logger
        self.host = host
        self.stop = stop
    }

    /// The watcher's loop (a `ThreadService` of the daemon's group): returns once the stop signal is raised.
    func loop() {
        var listener: PGConnection?
        var listenBackoff: TimeInterval = 1
        var nextListenAttempt = Date.distantPast
        var nextSweep = Date.distantPast
        var folder: PGConnection?
        var nextFold = Date.distantPast
        /// Whether the last fold failed (its warning is logged once, until a fold succeeds again).
        var foldFailing = false
        while !stop.isStopped {
            let config = configuration()
            // The daemon's fold outside its runs (each run folds for itself), every second: a pass
            // sees the queue at most that old.
            if Date() >= nextFold {
                let cleared = fold(config, on: &folder, failing: &foldFailing)
                nextFold = Date().addingTimeInterval(CheckInQueue.foldInterval)
                if !cleared.isEmpty && !stop.isStopped { pass(config, users: cleared) }
            }
            if listener == nil && Date() >= nextListenAttempt {
                let opened = openListener(config)
                listener = opened.connection
                if opened.pooled {
                    nextListenAttempt = .distantFuture  // sweeps only (until a reload restarts the daemon's view)
                } else if listener == nil {
                    nextListenAttempt = Date().addingTimeInterval(listenBackoff)
                    listenBackoff = min(60, listenBackoff * 2)
                } else {
                    listenBackoff = 1
                    nextSweep = .distantPast  // whatever came while not listening
                }
            }
            if Date() >= nextSweep && !stop.isStopped {
                pass(config)
                nextSweep = Date().addingTimeInterval(config.allClearPollSeconds)
            }
            let wait = max(0.05, min(nextSweep.timeIntervalSinceNow, nextFold.timeIntervalSinceNow, 5))
            if let connection = listener {
                do {
                    var heard = try connection.waitForNotifications(timeout: wait, stop: stop)
                    if !heard.isEmpty && !stop.isStopped {
                        // A burst of check-ins: gather what comes within a moment into one pass,
                        // for the users heard of (the sweep finds everything else).
                        _ = stop.sleep(0.05)
                        heard += (try? connection.waitForNotifications(timeout: 0, stop: stop)) ?? []
                        pass(config, users: Self.users(heard))
                    }
                } catch {
                    logger.warning("all-clear listener lost its database connection: \(error); sweeping every \(Int(config.allClearPollSeconds)) s until it is back")
                    listener = nil
                }
            } else {
                _ = stop.sleep(wait)
            }
        }
    }

    /// Folds the check-in queue on `connection` (opened on `DATABASE_URL` when nil, dropped when it
    /// fails); returns the users the fold queued for an all-clear. `foldFailing`: whether the last
    /// fold failed (its warning is logged once, until a fold succeeds again).
    private func fold(_ config: NotifierConfiguration, on connection: inout PGConnection?, failing foldFailing: inout Bool) -> Set<String> {
        do {
            let db = try connection ?? PGConnection(config.database, applicationName: "sileme-notifier (fold)")
            connection = db
            // Most seconds nothing was queued: the probe alone. A stop cancels the fold (after
            // downtime the queue holds every check-in since).
            let cleared = try CheckInQueue.isEmpty(db) ? [] : try db.cancellable(on: stop) { try CheckInQueue.fold(db) }
            if foldFailing {
                logger.notice("folding the check-in queue again")
                foldFailing = false
            }
            return cleared
        } catch {
            connection = nil
            if !foldFailing && !stop.isStopped {
                logger.warning("cannot fold the check-in queue: \(error); trying again every second (each run folds for itself)")
                foldFailing = true
            }
            return []
        }
    }

    /// A `LISTEN`ing connection; none when the database is unreachable (logged; tried again
    /// later), or for good (`pooled`) when `DATABASE_URL` goes through a pooler and
    /// `DATABASE_LISTEN_URL` is not set: a pooler does not carry `NOTIFY` to a client.
    private func openListener(_ config: NotifierConfiguration) -> (connection: PGConnection?, pooled: Bool) {
        do {
            let connection = try PGConnection(config.databaseListenURL ?? config.databaseURL, schema: config.databaseSchema,
                                              applicationName: "sileme-notifier (listen)")
            let direct = try connection.isDirect
            guard config.databaseListenURL != nil || direct else {
                logger.notice("DATABASE_URL goes through a connection pooler and DATABASE_LISTEN_URL is not set: the daemon's own folds answer check-ins each second; folds by others (runs, dry runs, other daemons) are found by a sweep every \(Int(config.allClearPollSeconds)) s")
                return (nil, true)
            }
            try connection.execute(SQLStatement("LISTEN \(Self.channel)"))
            return (connection, false)
        } catch {
            logger.warning("all-clear listener cannot connect: \(error)")
            return (nil, false)
        }
    }

    /// The users named by the notifications' payloads (the trigger sends the user id); nil —
    /// a whole sweep — when one is not a user id (someone else's `NOTIFY` on the channel).
    static func users(_ payloads: [String]) -> Set<String>? {
        let ids = payloads.compactMap { UUID(uuidString: $0).map { $0.uuidString.lowercased() } }
        return ids.count == payloads.count ? Set(ids) : nil
    }

    /// One all-clear pass for today (in the service zone): for `users` only when given (the
    /// check-ins just heard of), else the whole sweep.
    private func pass(_ config: NotifierConfiguration, users: Set<String>? = nil) {
        let today = config.schedule.runDate(at: Date())
        let run = NotificationRun(configuration: config, runDate: today, mode: .daemon, logger: logger, host: host,
                                  scope: .allClears(users: users), sessions: sessions())
        do {
            let done = try run.executeAllClears(control: RunControl(stop: stop))
            if done.sent + done.failed > 0 {
                logger.notice("all-clear pass: \(done.sent) sent, \(done.failed) failed")
            }
        } catch where stop.isStopped {
            logger.info("all-clear pass stopped: \(error)")
        } catch {
            logger.error("all-clear pass failed: \(error); trying again in \(Int(config.allClearPollSeconds)) s")
        }
    }
}
