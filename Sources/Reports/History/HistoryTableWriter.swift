import Foundation
import Store
import Output
import Values

/// The history report as tables for an 80-column terminal (wide CJK characters count as two):
/// per day, the counts, then the runs, the failed/retrying/stuck mails with the server's reply,
/// the skip reasons and the distribution of `m`; per user, the streaks and the mails. Ends with
/// the totals.
package final class HistoryTableWriter: HistorySink {
    private let output: TextOutput
    private var header: HistoryHeader!
    private var overview: HistoryOverview!
    private var time = HistoryTime(zone: TimeZone(identifier: "UTC")!)
    /// The day whose problem rows are being listed, and how many were listed.
    private var listing = ProblemListing()
    private var sectionRows = 0

    /// Indent of the detail lines under a row (past the DATE column).
    private static let indent = String(repeating: " ", count: 12)
    private static let detailWidth = 80 - 12

    package static let dayColumns = TextColumns([
        // No LEGACY column (rows from before delivery states: the totals count them) so that BOUNCED fits in 80.
        ("DATE", 10, false), ("RUNS", 4, true), ("SENT", 7, true), ("FAILED", 6, true), ("BOUNCED", 7, true),
        ("RETRY", 6, true), ("SENDING", 7, true), ("SKIPPED", 7, true), ("NOTE", 10, false),
    ])
    package static let runColumns = TextColumns([
        ("DATE", 10, false), ("STARTED", 11, false), ("SECS", 5, true), ("MODE", 7, false), ("HOST", 10, false),
        ("STATUS", 9, false), ("SENT", 5, true), ("FAILED", 6, true),
    ])
    package static let problemColumns = TextColumns([
        ("DATE", 10, false), ("STATUS", 7, false), ("USER", 8, false), ("NAME", 10, false), ("RECIPIENT", 20, false),
        ("M", 3, true), ("TRIES", 5, true),
    ])
    package static let skipColumns = TextColumns([("DATE", 10, false), ("USERS", 5, true), ("REASON", 61, false)])
    package static let missDayColumns = TextColumns([("M", 3, true), ("ROWS", 7, true), ("SENT", 7, true), ("NOT SENT", 8, true)])
    package static let escalationColumns = TextColumns([
        ("DATE", 10, false), ("ALERTED", 7, true), ("ACKED", 5, true), ("MEDIAN", 8, true), ("P90", 8, true),
        ("ESCAL", 5, true), ("UNHEARD", 7, true), ("OK", 3, true), ("UNREACH", 7, true),
    ])
    package static let streakColumns = TextColumns([
        ("LAST", 10, false), ("NEXT", 10, false), ("MISSED", 6, true), ("OUTCOME", 48, false),
    ])
    package static let notificationColumns = TextColumns([
        ("DATE", 10, false), ("STATUS", 15, false), ("M", 3, true), ("RECIPIENT", 20, false), ("TRIES", 5, true),
        ("TIME", 11, false),
    ])

    /// Writes to `output`.
    package init(output: TextOutput) { self.output = output }

    package func begin(_ header: HistoryHeader, overview: HistoryOverview) throws {
        self.header = header
        self.overview = overview
        time = HistoryTime(zone: header.timeZone)
        let request = header.request
        let facts = ["\(request.from) to \(request.to) (\(header.timeZone.identifier))",
                     "threshold \(header.thresholdDays) days", "catch-up \(header.catchUpDays) days"]
        if let user = header.user {
            let who = ["name " + DisplayWidth.truncate(user.name, to: 40), "contact \(user.contactEmail)"]
            for line in Self.joinWrapped("History of user \(user.userID),", who + facts) { write(line) }
            return
        }
        for line in Self.joinWrapped("History", facts) { write(line) }
        write(Self.dayColumns.titleLine)
        for day in overview.days {
            write(Self.dayColumns.line([
                day.date.description, String(day.runs), String(day.sent), String(day.failed), String(day.bounced), String(day.retryPending),
                String(day.sending), String(day.skipped), day.runNote,
            ]))
        }
        if !overview.byKind.isEmpty {
            write("")
            for line in Self.joinWrapped("By kind:", overview.byKind.map {
                "\($0.label) \($0.sent) sent, \($0.failed) failed, \($0.pending) pending\($0.bounced > 0 ? ", \($0.bounced) bounced" : "");"
            }) { write(line) }
        }
        if !overview.intakeGaps.isEmpty {
            write("")
            write("Intake gaps (far fewer check-ins than usual, as when the app is down; alerts over them are held)")
            for gap in overview.intakeGaps { write("  " + gap.described) }
        }
        if overview.acknowledgements > 0 {
            write("")
            write("Acknowledgements: \(overview.acknowledgements) (a contact said \"I'm on it\"; the others were told)")
        }
        writeEscalation()
        if !overview.bouncesByDay.isEmpty {
            write("")
            write("Bounce reports read (a relay reporting a mail it had accepted undelivered)")
            // The permanent reports' classes under their line, wrapped (only no_such_address made a contact undeliverable).
            func classes(_ count: HistoryOverview.BounceCount, indent: String) {
                guard let described = count.classesDescribed else { return }
                for line in TextColumns.wrap("permanent: " + described, width: 80 - indent.count, maxLines: 3) { write(indent + line) }
            }
            for day in overview.bouncesByDay {
                write("  \(day.key): \(day.described)")
                classes(day, indent: "    ")
            }
            write("  By recipient domain:")
            for domain in overview.bouncesByDomain {
                write("    \(DisplayWidth.truncate(domain.key.isEmpty ? "(none)" : domain.key, to: 40)): \(domain.described)")
                classes(domain, indent: "      ")
            }
        }
        if !overview.canaries.isEmpty {
            write("")
            write("Canaries (a test message through each relay, back in the bounce mailbox or lost)")
            for relay in overview.canaries { write("  \(relay.relay): \(HistoryOverview.described(relay))") }
        }
        if !overview.undeliverable.isEmpty {
            write("")
            write("Undeliverable contacts (refused as unknown, or bounced; ask the user to fix them)")
            for contact in overview.undeliverable {
                write("  \(contact.userID)  \(contact.email)  since \(time.iso(contact.since))  \(DisplayWidth.truncate(contact.lastReply, to: 60))")
            }
        }
    }

    package func beginSection(_ section: HistorySection) throws {
        sectionRows = 0
        listing.reset()
        write("")
        switch section {
        case .runs:
            write("Runs")
            write(Self.runColumns.titleLine)
        case .problems:
            write("Failed, retrying and stuck mails")
            write(Self.problemColumns.titleLine)
        case .streaks:
            write("Streaks (from a check-in to the next)")
            write(Self.streakColumns.titleLine)
        case .notifications:
            write("Notifications")
            write(Self.notificationColumns.titleLine)
        }
    }

    package func run(_ run: RunRecord) throws {
        sectionRows += 1
        write(Self.runColumns.line([
            run.runDate.description, run.startedAt.map(time.dayAndMinute) ?? "",
            run.durationSeconds.map { String(format: "%.1f", $0) } ?? "-", run.mode, run.host, run.status,
            run.sent.map(String.init) ?? "-", run.failed.map(String.init) ?? "-",
        ]))
        if let error = run.error { detail("error: " + error) }
        if let guards = run.guardsText { detail(guards) }
    }

    package func notification(_ record: NotificationRecord) throws {
        sectionRows += 1
        if header.user != nil {
            let when = record.sentAt ?? record.nextAttemptAt ?? record.claimedAt
            write(Self.notificationColumns.line([
                record.date.description, record.displayStatus, String(record.missedDays), record.shownRecipient,
                String(record.attempts), when.map(time.dayAndMinute) ?? "",
            ]))
            var parts: [String] = []
            if let id = record.messageID { parts.append("message id <\(id)>") }
            if let next = record.nextAttemptAt, record.status == "retry" { parts.append("next attempt \(time.dayAndMinute(next))") }
            if let detail = record.detail { parts.append(detail) }
            if !parts.isEmpty { detail(parts.joined(separator: " · ")) }
            return
        }
        if let cut = listing.add(record.date, overview: overview) { sayMore(cut) }
        write(Self.problemColumns.line([
            record.date.description, record.displayStatus, String(record.userID.prefix(8)), record.name ?? "",
            record.shownRecipient, String(record.missedDays), String(record.attempts),
        ]))
        var parts: [String] = []
        switch record.status {
        case "retry"?:
            if let next = record.nextAttemptAt { parts.append("next attempt \(time.dayAndMinute(next))") }
        case "sending"?:
            let since = record.claimedAt.map { " \(time.dayAndMinute($0))" } ?? ""
            parts.append(record.claimAlive ? "claimed\(since), in flight"
                                           : "claimed\(since), session gone: the next run resends it")
        default:
            break
        }
        if let detail = record.detail { parts.append(detail) }
        if !parts.isEmpty { detail(parts.joined(separator: " · ")) }
    }

    package func streak(_ streak: Streak) throws {
        sectionRows += 1
        let outcome: String
        switch streak.outcome {
        case .notified:
            let m = streak.notifiedMissedDays.map { ", m \($0)" } ?? ""
            let at = streak.sentAt.map { " at \(time.clock($0))" } ?? ""
            outcome = "notified \(streak.notifiedOn?.description ?? "")\(at)\(m)"
        case .notSent:
            outcome = "not sent: \(streak.lastStatus ?? "legacy row") (\(streak.rows) row\(streak.rows == 1 ? "" : "s"))"
        case .notDue:
            outcome = "not due (below \(header.thresholdDays) missed days)"
        case .noRecord:
            outcome = "NO RECORD: due, but nothing was recorded"
        case .superseded:
            outcome = "superseded: a newer account checked in"
        case .paused:
            outcome = "paused: away through the due days"
        }
        write(Self.streakColumns.line([
            streak.lastCheckIn.description, streak.nextCheckIn?.description ?? "-", String(streak.missedDays), outcome,
        ]))
        if let error = streak.lastError { detail(error) }
    }

    package func endSection(_ section: HistorySection) throws {
        if section == .problems, let cut = listing.close(overview: overview) { sayMore(cut) }
        if sectionRows == 0 { write("(none)") }
    }

    package func end() throws {
        let totals = overview.totals
        if header.user == nil {
            write("")
            write("Skipped users")
            write(Self.skipColumns.titleLine)
            for skip in overview.skips {
                write(Self.skipColumns.line([skip.date.description, String(skip.count), skip.reason]))
            }
            if overview.skips.isEmpty { write("(none)") }
        }
        write("")
        write("Consecutive missed days at notification")
        write(Self.missDayColumns.titleLine)
        for bucket in overview.missDays {
            write(Self.missDayColumns.line([String(bucket.missedDays), String(bucket.count), String(bucket.sent),
                                            String(bucket.notSent)]))
        }
        if overview.missDays.isEmpty { write("(none)") }
        write("")
        if header.user == nil {
            let without = overview.daysWithoutRun
            write("Runs: \(totals.runs) on \(overview.days.count) days; \(without) day\(without == 1 ? "" : "s") without a run")
        }
        let parts = ["sent \(totals.sent)", "failed \(totals.failed)", "bounced \(totals.bounced)", "retry \(totals.retryPending)",
                     "sending \(totals.sending)", "skipped \(totals.skipped)",
                     "legacy \(totals.legacy) (\(totals.legacySent) sent, \(totals.legacyNotSent) not sent)"]
        for line in Self.joinWrapped("Totals: ", parts) { write(line) }
        output.flush()
    }

    /// Escalation by alert date (the days with streaks, then the period), when any streak was
    /// alerted: the time to the first acknowledgement as `h:mm:ss`, `-` when none was acknowledged.
    private func writeEscalation() {
        let totals = overview.escalationTotals
        guard !totals.isEmpty else { return }
        write("")
        write("Escalation by alert date: streaks alerted, acknowledged (\"I'm on it\"),")
        write("the time from the first alert to the first acknowledgement (median, P90),")
        write("escalated, unheard, and the outcomes reported (OK, could not reach them)")
        write(Self.escalationColumns.titleLine)
        func line(_ label: String, _ day: EscalationDay) {
            let time = day.timeToAcknowledgement
            write(Self.escalationColumns.line([
                label, String(day.alerted), String(day.acknowledged), time.map { DelaySummary.clock($0.median) } ?? "-",
                time.map { DelaySummary.clock($0.p90) } ?? "-", String(day.escalated), String(day.unheard),
                String(day.outcomeOK), String(day.outcomeUnreachable),
            ]))
        }
        for day in overview.escalation where !day.isEmpty { line(day.date.description, day) }
        line("TOTAL", totals)
    }

    /// After a day's listed problem rows: says how many more the day has when the list was cut.
    private func sayMore(_ cut: (date: CalendarDate, more: Int)) {
            write(Self.indent + "… and \(cut.more) more on \(cut.date) (--format json or csv lists them all)")
    }

    /// Detail text under a row, indented, in at most three lines.
    private func detail(_ text: String) {
        for line in TextColumns.wrap(text, width: Self.detailWidth, maxLines: 3) { write(Self.indent + line) }
    }

    /// `prefix` and `parts` joined with `, `, wrapped at 80 columns (continuation lines indented).
    package static func joinWrapped(_ prefix: String, _ parts: [String]) -> [String] {
        var lines: [String] = []
        var current = prefix
        for (index, part) in parts.enumerated() {
            let piece = part + (index < parts.count - 1 ? "," : "")
            let candidate = current.hasSuffix(" ") ? current + piece : current + " " + piece
            if DisplayWidth.of(candidate) > 80, current != prefix {
                lines.append(current)
                current = "        " + piece
            } else {
                current = candidate
            }
        }
        lines.append(current)
        return lines
    }

    private func write(_ line: String) { output.write(line + "\n") }
}
