import Output
import Rule
import Store
import Values

/// The dry-run report as a table for a terminal: fixed columns that fit 80 columns (wide CJK
/// characters count as two), long values cut with `…`, and the summary counts at the end. A
/// `superseded` or `paused` row, or one with an ignored future-dated check-in, is followed by an
/// indented line that says why.
package final class TableReportWriter: ReportSink {
    private let output: TextOutput
    private let fullEmails: Bool
    /// Column titles and widths (display columns); separated by two spaces, 80 columns in all.
    /// USER shows the first 8 characters of the id (enough to tell UUIDs apart; JSON has them whole).
    private static let columns: [(String, Int)] = [
        ("USER", 8), ("NAME", 12), ("EMAIL", 20), ("LAST", 10), ("DAYS", 4), ("DECISION", 16),
    ]

    /// Writes to `output`, masking emails unless `fullEmails`.
    package init(output: TextOutput, fullEmails: Bool) {
        self.output = output
        self.fullEmails = fullEmails
    }

    /// The report's run date: a row on another date says so.
    private var reportDate: CalendarDate?

    package func begin(_ header: ReportHeader) throws {
        reportDate = header.runDate
        output.write("Dry run for \(header.runDate) (\(header.timeZone)), threshold \(header.thresholdDays) days, "
                     + "catch-up \(header.catchUpDays) days\n")
        if header.emptyTimeZoneUsers > 0 {
            output.write("Note: \(header.emptyTimeZoneUsers) user(s) have an empty time_zone: served in \(header.timeZone), "
                         + "like users without one\n")
        }
        output.write(line(Self.columns.map(\.0)) + "\n")
    }

    package func row(_ row: ReportRow) throws {
        output.write(line([String(row.userID.prefix(8)), row.name, row.displayEmail(full: fullEmails), row.lastCheckIn.description,
                           String(row.missedDays), row.decision.rawValue]) + "\n")
        // The reason of a guard's decision and any note, on an indented line of its own.
        var why: [String] = []
        switch row.decision {
        case .superseded: why.append("newer account \(row.newerAccount ?? "?") checked in \(row.newerCheckIn?.description ?? "?")")
        case .paused: why.append(row.reason ?? "paused")
        default: break
        }
        // A user on another date than the report's (their own time, docs/user-time.md).
        if let runDate = row.runDate, runDate != reportDate { why.append("run date \(runDate) in \(row.timeZone ?? "?")") }
        if let note = row.note { why.append(note) }
        if !why.isEmpty {
            output.write("  ↳ " + DisplayWidth.truncate(Printable.text(why.joined(separator: "; ")), to: 76) + "\n")
        }
    }

    /// The other messages a run would send now, one line each, after the users.
    package func lifecycle(_ messages: LifecycleMessages) throws {
        guard !messages.isEmpty else { return }
        output.write("Other messages a run would send now:\n")
        try messages.forEach { due in
            let date = due.notificationDate.map { " (alert of \($0))" } ?? ""
            let contact = due.contact.isEmpty ? "" : "  " + (fullEmails ? Printable.text(due.contact) : EmailMasking.mask(due.contact))
            let channel = due.channel.shown.map { "\($0.name) " } ?? ""
            output.write("  \(channel)\(due.kind.rawValue)  \(due.userID)\(contact)\(date)\n")
        }
    }

    package func end(_ counts: RunTally) throws {
        let parts = counts.summarisedDecisions.map { "\($0.rawValue) \(counts.decisionCount($0))" }
        if counts.futureIgnored > 0 {
            output.write("Ignored: check-ins dated after the day after the run date, of \(counts.futureIgnored) user(s)\n")
        }
        output.write("Summary: " + parts.joined(separator: ", ") + "\n")
        output.flush()
    }

    private func line(_ values: [String]) -> String {
        zip(values, Self.columns).map { DisplayWidth.pad(DisplayWidth.truncate($0, to: $1.1), to: $1.1) }
            .joined(separator: "  ").trimmingTrailingSpaces()
    }
}
