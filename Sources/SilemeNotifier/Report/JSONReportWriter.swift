import Foundation

/// The dry-run report as one JSON object (SPEC §6), streamed: `run_date`, `time_zone`,
/// `threshold_days`, `catch_up_days`, `dry_run`, `users` (one object per listed user) and `summary`.
public final class JSONReportWriter: ReportSink {
    private let output: TextOutput
    private let fullEmails: Bool
    private var first = true

    /// Writes to `output`, masking emails unless `fullEmails`.
    public init(output: TextOutput, fullEmails: Bool) {
        self.output = output
        self.fullEmails = fullEmails
    }

    public func begin(_ header: ReportHeader) throws {
        output.write("{\"run_date\":\(Self.string(header.runDate.description)),\"time_zone\":\(Self.string(header.timeZone)),"
                     + "\"threshold_days\":\(header.thresholdDays),\"catch_up_days\":\(header.catchUpDays),"
                     + "\"dry_run\":\(header.dryRun),\"users\":[")
    }

    public func row(_ row: ReportRow) throws {
        output.write(first ? "\n" : ",\n")
        first = false
        var object = "{\"user_id\":\(Self.string(row.userID)),\"name\":\(Self.string(row.name)),"
            + "\"email\":\(Self.string(row.displayEmail(full: fullEmails))),"
            + "\"last_check_in_date\":\(Self.string(row.lastCheckIn.description)),"
            + "\"consecutive_miss_days\":\(row.missedDays),\"decision\":\(Self.string(row.decision.rawValue))"
        if let reason = row.reason { object += ",\"reason\":\(Self.string(reason))" }
        output.write(object + "}")
    }

    public func end(_ counts: RunCounts) throws {
        let summary = Decision.allCases.map { "\(Self.string($0.rawValue)):\(counts.decisionCount($0))" }.joined(separator: ",")
        output.write("\n],\"summary\":{\(summary)}}\n")
        output.flush()
    }

    /// A JSON string literal for `text` (RFC 8259 escaping; non-ASCII kept as UTF-8).
    static func string(_ text: String) -> String {
        // Fast path: nothing to escape (no control characters, quotes, backslashes, U+2028/2029).
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 != 0xE2 }) { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}", "\u{2029}": out += String(format: "\\u%04x", scalar.value)
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}
