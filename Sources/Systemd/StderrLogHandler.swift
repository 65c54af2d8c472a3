import Foundation
import Logging
import Values

/// A swift-log handler writing one readable line per record to standard error.
///
/// As the journal's stand-in (no journald running) it writes every field:
/// `2026-01-13T09:00:01Z sileme-notifier[123] <info> message KEY=value …`; as the terminal
/// summary of a run started by hand (`fields: false`) just `sileme-notifier: warning: message`.
package struct StderrLogHandler: LogHandler {
    /// The logger's label.
    package let label: String
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    /// Whether the line carries the timestamp, pid and every metadata field.
    package let fields: Bool

    /// Creates a handler.
    package init(label: String, fields: Bool = true) {
        self.label = label
        self.fields = fields
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        guard fields else {
            let prefix = event.level >= .warning ? "\(event.level): " : ""
            FileHandle.standardError.write(Data("sileme-notifier: \(prefix)\(event.message)\n".utf8))
            return
        }
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let fields = merged.sorted { $0.key < $1.key }.map { "\(JournalLogHandler.fieldName($0.key) ?? $0.key)=\(Self.quoted("\($0.value)"))" }
        let now = Date()
        let stamp = CalendarDate.rfc3339(now, utcOffset: TimeZone.current.secondsFromGMT(for: now))
        let line = "\(stamp) sileme-notifier[\(ProcessInfo.processInfo.processIdentifier)] <\(event.level)> \(event.message)"
            + (fields.isEmpty ? "" : " " + fields.joined(separator: " ")) + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    private static func quoted(_ value: String) -> String {
        guard value.contains(where: { $0 == " " || $0 == "\"" || $0.isNewline }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r") + "\""
    }
}
