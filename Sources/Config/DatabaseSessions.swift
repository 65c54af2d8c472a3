/// How many database sessions of `DATABASE_URL` sileme-notifier holds at most at once — what a
/// connection pooler in session mode (PgBouncer's `default_pool_size`, Supavisor's pool size) must
/// allow per database and user, and what counts against PostgreSQL's `max_connections` on a direct
/// connection. A pure function of the settings (docs/operating.md, "Running behind a connection
/// pooler"); `sileme-notifier check` shows it.
///
/// A run (`--run-now`, `retry`, each of the daemon's runs) holds the run lock's session, the run's
/// own, the recorder's and one per sender (`SMTP_CONNECTIONS`), opened in that order, each only
/// once the one before it has answered; while its first pass reads, the skips' writer's in the
/// recorder's place (a pass with many skips: closed before the recorder's opens). The daemon holds a run's sessions, and beside them the
/// check-in queue's fold and an all-clear pass (its own session, its recorder's and its senders'),
/// the acknowledgement page's with `ACK_LISTEN`, the bounce reader's with `BOUNCE_MAILBOX` (during a
/// poll that found messages), the canary's with `CANARY_EVERY` (a moment a tick), and the `LISTEN` session when that is on
/// `DATABASE_URL` (a direct `DATABASE_URL` and no `DATABASE_LISTEN_URL`; never through a pooler).
/// Under a smaller pool a run starts with the senders that got a session; with fewer than
/// `minimumForRun` it fails after `PGConnection.sessionWaitSeconds`, naming the settings.
package struct DatabaseSessions: Sendable, Equatable, CustomStringConvertible {
    /// The senders of a run (`SMTP_CONNECTIONS`).
    package let senders: Int
    /// A run's sessions at most: run lock + run + recorder + senders.
    package let run: Int
    /// The daemon's sessions at most through a pooler (no `LISTEN` session on `DATABASE_URL`).
    package let daemon: Int
    /// The daemon's on a direct `DATABASE_URL` without `DATABASE_LISTEN_URL` (its `LISTEN` session
    /// too).
    package let daemonDirect: Int

    /// The sessions below which a run cannot send at all: run lock, run, recorder, one sender.
    package static let minimumForRun = 4

    /// The counts for `SMTP_CONNECTIONS` = `senders`, with the acknowledgement page's session
    /// when `ackPage`, the bounce reader's when `bounceReader`, the canary's when `canary`, and the
    /// `LISTEN` session's when `separateListenURL` is false.
    package init(senders: Int, ackPage: Bool, separateListenURL: Bool, bounceReader: Bool = false, canary: Bool = false) {
        self.senders = senders
        run = 3 + senders
        // The run's, the fold's, an all-clear pass's (its session, recorder, senders), the page's,
        // the bounce reader's, the canary's.
        daemon = run + 1 + (2 + senders) + (ackPage ? 1 : 0) + (bounceReader ? 1 : 0) + (canary ? 1 : 0)
        daemonDirect = daemon + (separateListenURL ? 0 : 1)
    }

    /// The counts for `configuration`.
    package init(_ configuration: NotifierConfiguration) {
        self.init(senders: configuration.smtp.connections, ackPage: configuration.ack != nil,
                  separateListenURL: configuration.databaseListenURL != nil, bounceReader: configuration.bounce != nil,
                  canary: configuration.canary != nil)
    }

    /// `a run 7 (run lock, run, recorder, 4 senders: SMTP_CONNECTIONS), the daemon 14`.
    package var description: String {
        "a run \(run) (run lock, run, recorder, \(senders) sender\(senders == 1 ? "" : "s"): SMTP_CONNECTIONS), the daemon \(daemon)"
            + (daemonDirect != daemon ? " (\(daemonDirect) on a direct connection, with its LISTEN session)" : "")
    }
}
