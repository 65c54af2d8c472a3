import Values
import Config

/// What `sileme-notifier check` verifies: the configuration can send, the database answers and
/// its schema is current, the templates render, and the mail server accepts a connection, TLS
/// and AUTH (with `MAIL_TRANSPORT=outbox`: that a probe file can be written in `OUTBOX_DIR`), and
/// with `WEBHOOK_URL` set, that the endpoint answers a signed `ping` event with 2xx. It also says
/// how many check-ins wait to be folded into the summary, and warns when no notifier has folded
/// them for over a minute (no daemon running: the summary and the all-clears wait for the next run),
/// and warns of every role besides the notifier's that can reach its schema, or the app's tables
/// without row-level security (`Exposure`: on Supabase, the app's anonymous key). With
/// `BOUNCE_MAILBOX` set, it lists the bounce mailbox through the reader's own code and says when a
/// daemon last read it. It says `ESCALATE_AFTER` and warns of the streaks unheard now (nobody
/// answered an alert or its escalation), naming how many and the oldest.
/// Each finding says what is wrong in words, never with a secret.
///
/// The check is a list of parts (`HealthCheck.parts`, one `Part` each, in the order of their
/// lines); `run` walks it. A new thing to check is a `Part` in the file of its concern
/// (`HealthCheck+Concern.swift`) and its place in that list.
package struct HealthCheck: Sendable {
    /// One line of the check's report.
    package struct Finding: Sendable {
        /// What was checked.
        package let subject: String
        /// Whether it is usable.
        package let ok: Bool
        /// Usable, but something the operator should look at (printed `warn`; no exit status).
        package var warning = false
        /// Details.
        package let detail: String
        /// The exit status the line means when it is not `ok`: 78 a configuration problem, 69 an
        /// unreachable server, 1 anything else.
        package var failure = ExitStatus.failure
    }

    /// Every part of `check`, in the order of its lines: what `run` walks. The database's parts
    /// read over the session `database` opens, in this order too.
    static let parts: [Part] = [
        .version, .configuration, .templates,
        .database, .checkInTriggers, .exposure, .acknowledgements, .checkInQueue, .heldAlerts, .languagesAsked,
        .escalation, .readDatabase, .ackPage, .webhook, .bounceMailbox, .outbox, .relays, .canary,
    ]

    /// The configuration to check.
    package let configuration: NotifierConfiguration

    /// Creates a check.
    package init(configuration: NotifierConfiguration) { self.configuration = configuration }

    /// Runs every check (none stops the others) and returns the findings in order, with the exit
    /// status they mean: 78 for configuration problems, 69 for an unreachable server, else 0.
    package func run() -> (findings: [Finding], status: ExitStatus) { run(Self.parts) }

    /// Walks `parts`: the lines of each that applies to the configuration, in order, and their status.
    func run(_ parts: [Part]) -> (findings: [Finding], status: ExitStatus) {
        var context = Context(configuration: configuration, parts: parts)
        var findings: [Finding] = []
        for part in parts where part.applies(to: configuration) {
            findings += part.lines(&context)
        }
        return (findings, Self.status(findings))
    }

    /// The exit status of the lines — pure: a configuration problem's (78) whatever else failed,
    /// else the first failed line's, else 0.
    static func status(_ findings: [Finding]) -> ExitStatus {
        findings.filter { !$0.ok }.reduce(ExitStatus.success) { status, finding in
            status == .success || finding.failure == .configuration ? finding.failure : status
        }
    }
}
