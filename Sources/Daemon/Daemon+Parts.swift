import AckPage
import Delivery
import ServiceLifecycle
import Values

extension Daemon {
    /// Runs until stopped. Returns 0 after a clean stop, 78 for a configuration or schema problem
    /// found at start, 69 when the database cannot be reached at start.
    ///
    /// The daemon's long-lived parts are the `Service`s of one group (`DaemonGroup`), which starts
    /// them together and stops them one by one, the last of the list first; the calling thread
    /// waits for it. A new part is one `Service` (a blocking loop: a `ThreadService`) added to
    /// the list.
    package func run() -> ExitStatus {
        if let failure = startupCheck() { return failure }
        let startup = Startup()
        let exit = Locked(ExitStatus.success)
        // The acknowledgement page (ACK_LISTEN): listening before READY, its texts as the start's
        // check (and then each reload) loaded them, its last language the default the mails settled on.
        let page = AckPageServer(configuration: configuration, texts: { [pageTexts] in pageTexts.withLock { $0 } }, logger: logger)
        // All-clears within seconds of the check-in, beside the daily schedule.
        let watcher = AllClearWatcher(configuration: { [shared] in shared.withLock { $0 } },
                                      sessions: { [keeper] in keeper.withLock { $0 } }, logger: logger, host: host, stop: stop)
        var parts: [any Service] = [
            // The scheduler's state is made on its own thread, and stays there (`Scheduler`).
            ThreadService("sileme-scheduler", stop: stop) { [self] in
                let status = Scheduler(self).run(page: page, startup: startup)
                exit.withLock { $0 = status }
            },
            ThreadService("sileme-all-clear", stop: stop, after: startup, loop: watcher.loop),
        ]
        // The bounce mailbox (BOUNCE_MAILBOX), read every BOUNCE_POLL_SECONDS on its own thread
        // and connection: a mailbox that cannot be read is logged and never holds up an alert.
        if let bounce = configuration.bounce {
            let reader = BounceReader(settings: bounce, database: configuration.database, logger: logger,
                                      webhook: configuration.webhook, appName: configuration.appName)
            parts.append(ThreadService("sileme-bounces", stop: stop, after: startup) { [stop] in reader.loop(stop: stop) })
        }
        // The canary (CANARY_EVERY): a test message through each relay into that mailbox, on its
        // own thread and connection; one not back within CANARY_WITHIN is canary_lost.
        if let canary = CanarySender(configuration: configuration, logger: logger) {
            parts.append(ThreadService("sileme-canary", stop: stop, after: startup) { [stop] in canary.loop(stop: stop) })
        }
        // Last: the first the group stops, so its clients' connections close while the loops finish.
        if let page { parts.append(page) }
        DaemonGroup.run(parts, stop: stop, logger: logger)
        return exit.withLock { $0 }
    }
}
