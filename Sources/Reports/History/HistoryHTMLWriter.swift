import Foundation
import Output
import Store
import Values

/// The history report as one self-contained HTML page: inline CSS, inline SVG charts drawn by
/// `SVGBarChart`, no external assets and no JavaScript. Per day: a summary, the charts (mails sent
/// and not delivered per day; consecutive missed days at notification; when streaks were alerted,
/// the time to the first acknowledgement and the escalations per day, with their table), the per-day table, skip
/// reasons, runs, and failed/retrying/stuck mails with the server's reply. Per user: the user, the
/// summary, the charts, the streaks and every mail. Every value from the database is escaped.
package final class HistoryHTMLWriter: HistorySink {
    private let output: TextOutput
    private var header: HistoryHeader!
    private var overview: HistoryOverview!
    private var time = HistoryTime(zone: TimeZone(identifier: "UTC")!)
    private var sectionRows = 0
    private var listing = ProblemListing()

    /// Writes to `output`.
    package init(output: TextOutput) { self.output = output }

    package static let style = """
        :root { color-scheme: light; }
        body { margin: 0; background: #fff; color: #1f2933;
               font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "PingFang SC",
                     "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC",
                     "WenQuanYi Micro Hei", sans-serif; }
        main { max-width: 1160px; margin: 0 auto; padding: 24px 20px 48px; }
        h1 { font-size: 24px; margin: 0 0 4px; }
        h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid #d5dce5; padding-bottom: 4px; }
        .period { color: #52606d; margin: 0 0 16px; }
        .cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 0; padding: 0; }
        .card { border: 1px solid #d5dce5; border-radius: 6px; padding: 8px 14px; min-width: 92px; }
        .card dt { font-size: 12px; color: #52606d; }
        .card dd { margin: 0; font-size: 22px; font-weight: 600; }
        .card.bad dd { color: #9b1c1c; }
        svg.chart { display: block; max-width: 100%; height: auto; margin: 8px 0; }
        svg.chart text { font-family: inherit; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: 13px; }
        th, td { border-bottom: 1px solid #e4e7eb; padding: 4px 8px; text-align: left; vertical-align: top; }
        th { background: #f0f2f5; font-weight: 600; }
        td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
        td.mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; word-break: break-all; }
        td.d, td.mono.d { white-space: nowrap; word-break: normal; }
        td small { color: #52606d; }
        tr.warn td { background: #fff4e5; }
        tr.total td { font-weight: 600; }
        td.none, p.note { color: #52606d; font-style: italic; }
        footer { margin-top: 40px; color: #7b8794; font-size: 12px; }
        @media print { main { max-width: none; } .scroll { overflow: visible; } }
        """

    package func begin(_ header: HistoryHeader, overview: HistoryOverview) throws {
        self.header = header
        self.overview = overview
        time = HistoryTime(zone: header.timeZone)
        let request = header.request
        let title = header.user == nil ? "Notification history" : "Notification history of one user"
        write("<!DOCTYPE html>\n<html lang=\"zh-CN\">\n<head>\n<meta charset=\"utf-8\">\n"
              + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
              + "<title>一键打卡 · \(title) \(request.from) – \(request.to)</title>\n<style>\n\(Self.style)\n</style>\n</head>\n"
              + "<body>\n<main>\n<header>\n<h1>一键打卡 · \(title)</h1>\n")
        write("<p class=\"period\">\(request.from) – \(request.to) · \(e(header.timeZone.identifier)) · threshold "
              + "\(header.thresholdDays) days · catch-up \(header.catchUpDays) days</p>\n</header>\n")
        if let user = header.user {
            write("<section id=\"user\">\n<h2>User</h2>\n<dl class=\"cards\">\n"
                  + card("User id", user.userID, mono: true) + card("Name", user.name)
                  + card("Contact (now)", user.contactEmail) + "</dl>\n</section>\n")
        }
        let totals = overview.totals
        var cards = card("Days", String(overview.days.count))
        if header.user == nil {
            cards += card("Runs", String(totals.runs))
            cards += card("Days without a run", String(overview.daysWithoutRun), bad: overview.daysWithoutRun > 0)
        }
        cards += card("Sent", String(totals.sent)) + card("Failed", String(totals.failed), bad: totals.failed > 0)
            + card("Bounced", String(totals.bounced), bad: totals.bounced > 0)
            + card("Retry pending", String(totals.retryPending), bad: totals.retryPending > 0)
            + card("Sending / stuck", String(totals.sending), bad: totals.sending > 0)
            + card("Skipped", String(totals.skipped), bad: totals.skipped > 0)
            + card("Legacy (sent / not)", "\(totals.legacySent) / \(totals.legacyNotSent)")
        write("<section id=\"summary\">\n<h2>Summary</h2>\n<dl class=\"cards\">\n\(cards)</dl>\n</section>\n")
        if !overview.byKind.isEmpty {
            write("<section id=\"kinds\">\n<h2>By kind</h2>\n<dl class=\"cards\">\n"
                  + overview.byKind.map { card($0.label, "\($0.sent) sent · \($0.failed) failed · \($0.pending) pending"
                                                   + ($0.bounced > 0 ? " · \($0.bounced) bounced" : ""), bad: $0.failed + $0.bounced > 0) }
                      .joined() + "</dl>\n</section>\n")
        }
        if !overview.intakeGaps.isEmpty {
            write("<section id=\"intake-gaps\">\n<h2>Intake gaps</h2>\n<div class=\"scroll\"><table>\n<thead><tr>"
                  + th("Day") + th("Check-ins") + th("Usually") + th("Alerts held") + "</tr></thead>\n<tbody>\n"
                  + overview.intakeGaps.map {
                      "<tr><td>\(e($0.date.description))</td><td>\($0.intake)</td><td>\(e(HistoryOverview.IntakeGap.number($0.median)))</td><td>\($0.held)</td></tr>\n"
                  }.joined() + "</tbody></table></div>\n</section>\n")
        }
        if !overview.bouncesByDay.isEmpty {
            func rows(_ counts: [HistoryOverview.BounceCount]) -> String {
                counts.map {
                    "<tr><td>\(e($0.key.isEmpty ? "(none)" : $0.key))</td><td>\($0.permanent)</td>"
                        + $0.classColumns.map { "<td>\($0.count)</td>" }.joined() + "<td>\($0.transient)</td>"
                        + "<td>\($0.complaint)</td><td>\($0.unmatched)</td></tr>\n"
                }.joined()
            }
            // The permanent reports by class (docs/bounces.md): only "no such address" made a contact undeliverable.
            let head = th("Permanent", n: true) + BounceClass.allCases.map { th(Self.title($0), n: true) }.joined()
                + th("Transient", n: true) + th("Complaints", n: true) + th("Unmatched", n: true)
            write("<section id=\"bounces\">\n<h2>Bounce reports</h2>\n<div class=\"scroll\"><table>\n<thead><tr>" + th("Day read") + head
                  + "</tr></thead>\n<tbody>\n" + rows(overview.bouncesByDay) + "</tbody></table></div>\n"
                  + "<div class=\"scroll\"><table>\n<thead><tr>" + th("Recipient domain") + head
                  + "</tr></thead>\n<tbody>\n" + rows(overview.bouncesByDomain) + "</tbody></table></div>\n</section>\n")
        }
        if !overview.undeliverable.isEmpty {
            write("<section id=\"undeliverable\">\n<h2>Undeliverable contacts</h2>\n<div class=\"scroll\"><table>\n<thead><tr>"
                  + th("User") + th("Contact") + th("Since") + th("Reply") + "</tr></thead>\n<tbody>\n"
                  + overview.undeliverable.map {
                      "<tr><td class=\"mono\">\(e($0.userID))</td><td>\(e($0.email))</td><td>\(e(time.iso($0.since)))</td><td>\(e($0.lastReply))</td></tr>\n"
                  }.joined() + "</tbody></table></div>\n</section>\n")
        }

        write("<section id=\"charts\">\n<h2>Mails per day</h2>\n")
        write(HistoryCharts.mailsPerDay(overview).render() + "\n")
        write("<h2>Consecutive missed days at notification</h2>\n")
        write(HistoryCharts.missDays(overview).render() + "\n</section>\n")
        writeEscalation()

        guard header.user == nil else { return }
        write("<section id=\"days\">\n<h2>Per day</h2>\n<div class=\"scroll\"><table>\n<thead><tr>"
              + th("Date") + th("Runs", n: true) + th("Sent", n: true) + th("Failed", n: true) + th("Bounced", n: true)
              + th("Retry pending", n: true) + th("Sending", n: true) + th("Skipped", n: true)
              + th("Legacy sent / not", n: true) + th("Note") + "</tr></thead>\n<tbody>\n")
        for day in overview.days {
            let note = day.runNote
            write("<tr data-day=\"\(day.date)\"\(note.isEmpty ? "" : " class=\"warn\"")>" + td(day.date.description, date: true)
                  + td(day.runs) + td(day.sent) + td(day.failed) + td(day.bounced) + td(day.retryPending) + td(day.sending)
                  + td(day.skipped) + td("\(day.legacySent) / \(day.legacyNotSent)", n: true) + td(note) + "</tr>\n")
        }
        write("</tbody>\n</table></div>\n</section>\n")
        write("<section id=\"skipped\">\n<h2>Skipped users by reason</h2>\n<div class=\"scroll\"><table>\n<thead><tr>"
              + th("Date") + th("Users", n: true) + th("Reason") + "</tr></thead>\n<tbody>\n")
        for skip in overview.skips {
            write("<tr>" + td(skip.date.description, date: true) + td(skip.count) + td(skip.reason) + "</tr>\n")
        }
        if overview.skips.isEmpty { write(none(3)) }
        write("</tbody>\n</table></div>\n</section>\n")
    }

    package func beginSection(_ section: HistorySection) throws {
        sectionRows = 0
        listing.reset()
        let heads: [String]
        let title: String
        switch section {
        case .runs:
            title = "Runs"
            heads = [th("Run date"), th("Started"), th("Seconds", n: true), th("Mode"), th("Host"), th("Status"),
                     th("Due", n: true), th("Sent", n: true), th("Failed", n: true), th("Already notified", n: true),
                     th("Stale", n: true), th("Skipped", n: true), th("Busy", n: true), th("Guards"), th("Error")]
        case .problems:
            title = "Failed, retrying and stuck mails"
            heads = [th("Date"), th("Status"), th("User"), th("Name"), th("Recipient"), th("m", n: true),
                     th("Last check-in"), th("Attempts", n: true), th("Next attempt / claim"), th("Server reply or error")]
        case .streaks:
            title = "Streaks (from a check-in to the next)"
            heads = [th("Last check-in"), th("Next check-in"), th("Missed days", n: true), th("Outcome"),
                     th("Notified on"), th("Sent at"), th("m", n: true), th("Message-ID"), th("Rows", n: true),
                     th("Last error")]
        case .notifications:
            title = "Notifications"
            heads = [th("Date"), th("Status"), th("m", n: true), th("Last check-in"), th("Recipient"),
                     th("Attempts", n: true), th("Sent / next attempt"), th("Message-ID"), th("Server reply or error")]
        }
        write("<section id=\"\(section.rawValue)\">\n<h2>\(title)</h2>\n<div class=\"scroll\"><table>\n<thead><tr>"
              + heads.joined() + "</tr></thead>\n<tbody>\n")
    }

    package func run(_ run: RunRecord) throws {
        sectionRows += 1
        let status = run.status == "completed" ? "" : " class=\"warn\""
        let skipped = run.invalidEmail.map { $0 + (run.invalidName ?? 0) }
        write("<tr\(status)>" + td(run.runDate.description, date: true) + td(run.startedAt.map(time.dayAndSecond) ?? "", date: true)
              + td(run.durationSeconds.map { String(format: "%.1f", $0) } ?? "", n: true)
              + td(run.mode, date: true) + td(run.host, date: true) + td(run.status) + td(run.due) + td(run.sent) + td(run.failed)
              + td(run.alreadyNotified) + td(run.stale) + td(skipped) + td(run.busyElsewhere) + td(run.guardsText ?? "") + td(run.error ?? "") + "</tr>\n")
    }

    package func notification(_ record: NotificationRecord) throws {
        sectionRows += 1
        if header.user != nil {
            let when = record.sentAt.map(time.dayAndSecond)
                ?? record.nextAttemptAt.map { "next " + time.dayAndSecond($0) } ?? ""
            write("<tr data-day=\"\(record.date)\">" + td(record.date.description, date: true) + td(record.displayStatus)
                  + td(record.missedDays) + td(record.lastCheckIn?.description ?? "", date: true) + td(record.shownRecipient)
                  + td(record.attempts) + td(when, date: true) + td(record.messageID ?? "", mono: true)
                  + td(record.detail ?? "") + "</tr>\n")
            return
        }
        if let cut = listing.add(record.date, overview: overview) { sayMore(cut) }
        var when = ""
        if record.status == "retry", let next = record.nextAttemptAt {
            when = "next " + time.dayAndSecond(next)
        } else if record.status == "sending" {
            when = "claimed " + (record.claimedAt.map(time.dayAndSecond) ?? "") + (record.claimedBy.map { " by \($0)" } ?? "")
                + (record.claimAlive ? " (in flight)" : " (session gone: the next run resends it)")
        }
        // The recipient as recorded; the current contact below it when it differs (or is shown in full).
        var recipient = e(record.recipient ?? "")
        if let contact = record.contactEmail, contact != record.recipient {
            recipient += (recipient.isEmpty ? "" : "<br>") + "<small>now: \(e(contact))</small>"
        }
        write("<tr data-day=\"\(record.date)\" data-status=\"\(e(record.displayStatus))\">" + td(record.date.description, date: true)
              + td(record.displayStatus) + "<td class=\"mono d\" title=\"\(e(record.userID))\">\(e(String(record.userID.prefix(8))))…</td>"
              + td(record.name ?? "") + "<td>\(recipient)</td>" + td(record.missedDays)
              + td(record.lastCheckIn?.description ?? "", date: true) + td(record.attempts) + td(when) + td(record.detail ?? "")
              + "</tr>\n")
    }

    package func streak(_ streak: Streak) throws {
        sectionRows += 1
        let warn = streak.outcome == .notSent || streak.outcome == .noRecord
        write("<tr\(warn ? " class=\"warn\"" : "")>" + td(streak.lastCheckIn.description, date: true)
              + td(streak.nextCheckIn?.description ?? "(still on)", date: true) + td(streak.missedDays)
              + td(streak.outcome.rawValue + (streak.lastStatus.map { " (\($0))" } ?? ""))
              + td(streak.notifiedOn?.description ?? "", date: true) + td(streak.sentAt.map(time.dayAndSecond) ?? "", date: true)
              + td(streak.notifiedMissedDays) + td(streak.messageID ?? "", mono: true) + td(streak.rows)
              + td(streak.lastError ?? "") + "</tr>\n")
    }

    package func endSection(_ section: HistorySection) throws {
        let columns = [HistorySection.runs: 14, .problems: 10, .streaks: 10, .notifications: 9][section] ?? 1
        if section == .problems, let cut = listing.close(overview: overview) { sayMore(cut) }
        if sectionRows == 0 { write(none(columns)) }
        write("</tbody>\n</table></div>\n</section>\n")
    }

    package func end() throws {
        let masking = header.request.fullEmails
            ? "Contact addresses are shown in full (--full-emails)."
            : "Contact addresses are masked; recipients are stored masked. --full-emails shows current contacts in full."
        write("<footer>Generated \(e(time.full(header.generatedAt))) by sileme-notifier report. \(masking)</footer>\n"
              + "</main>\n</body>\n</html>\n")
        output.flush()
    }

    /// Escalation by alert date, when any streak of the period was alerted: the period's figures,
    /// the two charts (time to the first acknowledgement; escalations and unheard alerts) and a
    /// table of the days with streaks.
    private func writeEscalation() {
        let totals = overview.escalationTotals
        guard !totals.isEmpty else { return }
        let time = totals.timeToAcknowledgement
        write("<section id=\"escalation\">\n<h2>Escalation</h2>\n<dl class=\"cards\">\n"
              + card("Streaks alerted", String(totals.alerted)) + card("Acknowledged", String(totals.acknowledged))
              + card("Time to acknowledge (median)", time.map { DelaySummary.clock($0.median) } ?? "–")
              + card("Time to acknowledge (90th percentile)", time.map { DelaySummary.clock($0.p90) } ?? "–")
              + card("Escalated", String(totals.escalated), bad: totals.escalated > 0)
              + card("Unheard", String(totals.unheard), bad: totals.unheard > 0)
              + card("Reported OK", String(totals.outcomeOK))
              + card("Could not reach them", String(totals.outcomeUnreachable), bad: totals.outcomeUnreachable > 0)
              + "</dl>\n")
        write("<h2>Time from the first alert to the first acknowledgement</h2>\n")
        write(HistoryCharts.timeToAcknowledgement(overview).render() + "\n")
        write("<h2>Escalations and unheard alerts per day</h2>\n")
        write(HistoryCharts.escalations(overview).render() + "\n")
        write("<div class=\"scroll\"><table>\n<thead><tr>" + th("Alert date") + th("Alerted", n: true) + th("Acknowledged", n: true)
              + th("Median", n: true) + th("90th percentile", n: true) + th("Escalated", n: true) + th("Unheard", n: true)
              + th("They're OK", n: true) + th("Couldn't reach them", n: true) + "</tr></thead>\n<tbody>\n")
        func row(_ label: String, _ day: EscalationDay, total: Bool) {
            let time = day.timeToAcknowledgement
            let classes = (total ? ["total"] : []) + (day.unheard > 0 ? ["warn"] : [])
            write("<tr\(total ? "" : " data-day=\"\(day.date)\"")\(classes.isEmpty ? "" : " class=\"\(classes.joined(separator: " "))\"")>"
                  + td(label, date: true) + td(day.alerted) + td(day.acknowledged)
                  + td(time.map { DelaySummary.clock($0.median) } ?? "–", n: true) + td(time.map { DelaySummary.clock($0.p90) } ?? "–", n: true)
                  + td(day.escalated) + td(day.unheard) + td(day.outcomeOK) + td(day.outcomeUnreachable) + "</tr>\n")
        }
        let days = overview.escalation.filter { !$0.isEmpty }
        for day in days { row(day.date.description, day, total: false) }
        row("Total", totals, total: true)
        write("</tbody>\n</table></div>\n</section>\n")
    }

    /// After a day's listed problem rows: a row saying how many more the day has when the list was cut.
    private func sayMore(_ cut: (date: CalendarDate, more: Int)) {
            write("<tr class=\"more\"><td colspan=\"10\" class=\"none\">… and \(cut.more) more on \(cut.date) "
                  + "(--format json or csv lists them all)</td></tr>\n")
    }

    private func e(_ text: String) -> String { Escaping.html(text) }
    /// A bounce class's column title (docs/bounces.md).
    static func title(_ bounceClass: BounceClass) -> String {
        switch bounceClass {
        case .noSuchAddress: "No such address"
        case .mailbox: "Mailbox"
        case .system: "System"
        case .routing: "Routing"
        case .protocol: "Protocol/content"
        case .policy: "Policy/spam"
        case .other: "Other"
        }
    }

    private func th(_ text: String, n: Bool = false) -> String { "<th\(n ? " class=\"n\"" : "")>\(e(text))</th>" }
    private func td(_ text: String, n: Bool = false, mono: Bool = false, date: Bool = false) -> String {
        "<td\(n ? " class=\"n\"" : mono ? " class=\"mono\"" : date ? " class=\"d\"" : "")>\(e(text))</td>"
    }
    private func td(_ number: Int?) -> String { td(number.map(String.init) ?? "", n: true) }
    private func none(_ columns: Int) -> String { "<tr><td colspan=\"\(columns)\" class=\"none\">none</td></tr>\n" }
    private func card(_ label: String, _ value: String, bad: Bool = false, mono: Bool = false) -> String {
        "<div class=\"card\(bad ? " bad" : "")\"><dt>\(e(label))</dt><dd\(mono ? " class=\"mono\" style=\"font-size:13px\"" : "")>"
            + "\(e(value))</dd></div>\n"
    }
    private func write(_ text: String) { output.write(text) }
}
