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
}
