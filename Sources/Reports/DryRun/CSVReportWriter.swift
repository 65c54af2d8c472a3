import Output
import Store

/// The dry-run report as CSV (RFC 4180, UTF-8 with a byte-order mark so that spreadsheets read
/// Chinese names correctly), one line per listed user; the summary goes to the log, not the file.
/// The `reason` column also names an ignored future-dated check-in, the end of a pause, and an
/// unknown time zone.
package final class CSVReportWriter: ReportSink {
    private let output: TextOutput
    private let fullEmails: Bool

    /// Writes to `output`, masking emails unless `fullEmails`.
    package init(output: TextOutput, fullEmails: Bool) {
        self.output = output
        self.fullEmails = fullEmails
    }

    package func begin(_ header: ReportHeader) throws {
        output.write("\u{FEFF}user_id,name,email,last_check_in_date,consecutive_miss_days,decision,reason\r\n")
    }

    package func row(_ row: ReportRow) throws {
        let fields = [row.userID, row.name, row.displayEmail(full: fullEmails), row.lastCheckIn.description,
                      String(row.missedDays), row.decision.rawValue, row.explanation ?? ""]
        output.write(fields.map(Escaping.csv).joined(separator: ",") + "\r\n")
    }

    package func end(_ counts: RunTally) throws { output.flush() }
}
