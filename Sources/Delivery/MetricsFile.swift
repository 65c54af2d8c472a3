import Config
import Foundation
import Logging
import Store
import Values

/// `METRICS_FILE`: the notifier's figures in node_exporter's textfile-collector format, rewritten
/// atomically (a temporary file in the same folder, then `rename`) after every run — the
/// daemon's, a timer's `--run-now`, `retry` — and by the daemon at start. The figures come from
/// the database (`Housekeeping.figures`), so they say the same whichever process ran last.
package struct MetricsFile: Sendable {
    /// The file.
    package let path: String

    /// A writer for `path`.
    package init(path: String) { self.path = path }

    /// Reads the figures and rewrites the file; a failure is logged, never thrown (metrics must not
    /// fail a run). Does nothing without `METRICS_FILE`.
    package static func update(_ configuration: NotifierConfiguration, _ db: PGConnection, logger: Logger, now: Date = Date()) {
        guard let path = configuration.metricsFile else { return }
        do {
            let today = CalendarDate(now, in: configuration.timeZone)
            let since = today.adding(days: -(configuration.rule.catchUpDays + 1))
            try MetricsFile(path: path).write(render(try Housekeeping.figures(db, since: since), now: now))
        } catch {
            logger.warning("metrics file \(path) not written: \(error)")
        }
    }

    /// The text of the file: `HELP` and `TYPE` lines, then the samples, names `sileme_notifier_*`.
    package static func render(_ figures: Housekeeping.Figures, now: Date) -> String {
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: Double)]) {
            text += "# HELP sileme_notifier_\(name) \(help)\n# TYPE sileme_notifier_\(name) \(type)\n"
            for sample in samples {
                let value = sample.value == sample.value.rounded() && abs(sample.value) < 1e15
                    ? String(Int64(sample.value)) : String(format: "%.3f", sample.value)
                text += "sileme_notifier_\(name)\(sample.labels.isEmpty ? "" : "{\(sample.labels)}") \(value)\n"
            }
        }
        metric("build_info", "gauge", "The notifier's version.", [("version=\"\(NotifierVersion.current)\"", 1)])
        metric("metrics_written_timestamp_seconds", "gauge", "When this file was written.", [("", now.timeIntervalSince1970)])
        if let run = figures.lastRun {
            // The run date and mode go in an info metric only: as labels of every series they
            // would start new series each day.
            metric("last_run_info", "gauge", "The latest run (any mode): its run date and mode.",
                   [("run_date=\"\(run.date)\",mode=\"\(run.mode)\"", 1)])
            metric("last_run_timestamp_seconds", "gauge", "When the latest run (any mode) started.", [("", run.started)])
            if let finished = run.finished {
                metric("last_run_duration_seconds", "gauge", "How long the latest run took.", [("", max(0, finished - run.started))])
            }
            metric("last_run_completed", "gauge", "1 when the latest run completed, 0 when it failed or is still running.",
                   [("", run.status == "completed" ? 1 : 0)])
            let outcomes = RunTally.fields.compactMap { field in field.metric.map { ($0, run.tally[keyPath: field.value]) } }
            metric("last_run_notifications", "gauge", "The latest run's users by kind of message and outcome.",
                   outcomes.map { ("kind=\"alert\",outcome=\"\($0.0)\"", Double($0.1)) })
        }
        if let success = figures.lastSuccess {
            metric("last_success_timestamp_seconds", "gauge", "When the latest completed daily run finished.", [("", success)])
        }
        metric("acknowledgements_total", "counter", "Acknowledgements recorded: a contact said \"I'm on it\" on the page (the others were told).",
               [("", Double(figures.acknowledgements))])
        // Escalation (docs/escalation.md): the steps made (counted as made: retention never lowers
        // them), and the escalated streaks nobody has heard yet.
        let escalation = figures.escalation
        metric("escalations_total", "counter", "Alerted streaks escalated: nobody heard the alert ESCALATE_AFTER after it went out.",
               [("", Double(escalation.escalated))])
        metric("unheard_total", "counter", "Escalated streaks declared unheard: still nobody heard ESCALATE_AFTER after the escalation.",
               [("", Double(escalation.declaredUnheard))])
        metric("escalations_open", "gauge", "Escalated streaks not heard yet, waiting for their unheard step.",
               [("", Double(escalation.open))])
        metric("unheard_streaks", "gauge", "Streaks declared unheard that nobody has heard since (no check-in, acknowledgement or \"They're OK\").",
               [("", Double(escalation.unheard))])
        if let oldest = escalation.oldestUnheard {
            metric("unheard_oldest_timestamp_seconds", "gauge", "When the oldest of them was declared unheard.",
                   [("", oldest.since.timeIntervalSince1970)])
        }
        metric("retry_backlog", "gauge", "Mails of the open days not sent yet, by status (retry: due again later; failed: permanent; sending: claimed).",
               figures.backlog.sorted { $0.key < $1.key }.map { ("status=\"\($0.key)\"", Double($0.value)) })
        metric("held_alerts", "gauge", "Users whose alert is held now over an intake gap (the app could not record check-ins); they go out at the hold's end.",
               [("", Double(figures.held.count))])
        if let release = figures.held.nextRelease {
            metric("held_alerts_release_timestamp_seconds", "gauge", "When the first held alert goes out.", [("", release.timeIntervalSince1970)])
        }
        if let bounces = figures.bounces {
            // The bounce reader's counts since the mailbox was first read (docs/bounces.md).
            metric("bounce_reports_total", "counter", "Messages read from the bounce mailbox (BOUNCE_MAILBOX).",
                   [("", Double(bounces.reports))])
            metric("bounces_applied_total", "counter", "Mails marked bounced by a report (their contact undeliverable).",
                   [("", Double(bounces.bounced))])
            metric("bounce_reports_kept_aside_total", "counter", "Messages of the bounce mailbox kept aside for a person (unparsed, unmatched, auto-replies).",
                   [("", Double(bounces.keptAside))])
            metric("bounce_mailbox_failures_total", "counter", "Polls of the bounce mailbox that could not read it (or record what it said).",
                   [("", Double(bounces.failures))])
            if let read = bounces.readAt {
                metric("bounce_mailbox_read_timestamp_seconds", "gauge", "When the bounce mailbox was last read (recorded at least every 5 minutes).",
                       [("", read.timeIntervalSince1970)])
            }
        }
        if !figures.relays.isEmpty {
            // Each relay's counts (docs/delivery.md, "Fallback relays"): labelled by its URL,
            // which has no user and no password (those are settings of their own).
            let relays = figures.relays.sorted { $0.key < $1.key }
            metric("relay_accepted_total", "counter", "Mails each relay accepted (SMTP_HOST, then SMTP_FALLBACK's).",
                   relays.map { ("relay=\"\(label($0.key))\"", Double($0.value.accepted)) })
            metric("relay_passed_over_total", "counter", "Times a message passed a relay over because it failed as a relay (unreachable, TLS, AUTH, 421, a refused session or sender).",
                   relays.map { ("relay=\"\(label($0.key))\"", Double($0.value.passedOver)) })
        }
        if !figures.canaries.isEmpty {
            // The canary (docs/operating.md, "The canary"): per relay, by its URL as above.
            let canaries = figures.canaries
            func relay(_ figures: CanaryStore.Figures) -> String { "relay=\"\(label(figures.relay))\"" }
            metric("canary_sent_total", "counter", "Canaries sent through each relay (CANARY_EVERY).",
                   canaries.map { (relay($0), Double($0.sent)) })
            metric("canary_lost_total", "counter", "Canaries through each relay that did not come back within CANARY_WITHIN, bounced or were refused.",
                   canaries.map { (relay($0), Double($0.lost)) })
            metric("canary_latency_seconds", "gauge", "How long the last canary back through each relay took to come back.",
                   canaries.compactMap { figures in figures.lastLatency.map { (relay(figures), $0) } })
            metric("canary_back_timestamp_seconds", "gauge", "When the last canary through each relay came back.",
                   canaries.compactMap { figures in figures.lastBackAt.map { (relay(figures), $0.timeIntervalSince1970) } })
        }
        return text
    }

    /// `value` as a label value of the text format: backslash, double quote and line feed escaped.
    static func label(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Writes `text` atomically: readers see the old file or the new one, never a part.
    package func write(_ text: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        let temporary = "\(folder)/.\((path as NSString).lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8),
                                             attributes: [.posixPermissions: 0o644]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "rename to \(path): \(reason)"])
        }
    }
}
