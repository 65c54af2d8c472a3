import Foundation
import Logging

/// A swift-log handler writing one readable line per record to standard error:
/// `2026-01-13T09:00:01+0800 sileme-notifier[123] <info> message KEY=value …`.
/// Used when there is no journal, and for the terminal summary of a run started by hand.
public struct StderrLogHandler: LogHandler {
    /// The logger's label.
    public let label: String
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    /// Creates a handler.
    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let fields = merged.sorted { $0.key < $1.key }.map { "\(JournalLogHandler.fieldName($0.key) ?? $0.key)=\(Self.quoted("\($0.value)"))" }
        let stamp = ISO8601DateFormatter.string(from: Date(), timeZone: .current,
                                                formatOptions: [.withInternetDateTime])
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
