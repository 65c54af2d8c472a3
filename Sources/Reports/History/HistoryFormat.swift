import Output

/// The formats of `sileme-notifier report`: the dry run's three text formats, and a
/// self-contained HTML page with charts.
package enum HistoryFormat: String, Sendable, CaseIterable {
    /// A table for an 80-column terminal, ending with the totals.
    case table
    /// One JSON object.
    case json
    /// CSV, UTF-8 with a byte-order mark, one line per record (its kind in the first column).
    case csv
    /// One HTML file with inline CSS and SVG charts, no external assets and no JavaScript.
    case html

    /// How many failed/retry/sending rows a day lists in this format (nil: all). The formats for
    /// people stop at a readable number and say how many more there are; the ones for programs
    /// list everything.
    package var problemLimitPerDay: Int? {
        switch self {
        case .table, .html: 50
        case .json, .csv: nil
        }
    }

    /// A writer of this format to `output`.
    package func writer(output: TextOutput) -> any HistorySink {
        switch self {
        case .table: HistoryTableWriter(output: output)
        case .json: HistoryJSONWriter(output: output)
        case .csv: HistoryCSVWriter(output: output)
        case .html: HistoryHTMLWriter(output: output)
        }
    }
}
