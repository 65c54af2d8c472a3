/// How a run was started, as recorded in `notifier_runs.mode` and the journal.
package enum RunMode: String, Sendable, Codable {
    /// The long-running daemon's daily run.
    case daemon
    /// `--run-now` by hand or from a timer.
    case runNow = "run-now"
    /// `--run-now --dry-run`: nothing written, nothing sent.
    case dryRun = "dry-run"
    /// `sileme-notifier retry`: failed or stuck mails of one date re-attempted now (not a daily run:
    /// the daemon's catch-up ignores it).
    case retry
    /// A daemon helping the daemon that holds the run lock with an instant's sending
    /// (`SharedSending`): it sends what it claims of that run's alerts, and decides nothing else
    /// (not a daily run: the daemon's catch-up ignores it).
    case join = "daemon-join"
}
