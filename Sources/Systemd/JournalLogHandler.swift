import CSystemd
import Foundation
import Logging

/// A swift-log handler that writes each record to journald over the native protocol
/// (`sd_journal_sendv`): `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`, `CODE_FILE`/`CODE_LINE`/
/// `CODE_FUNC`, and every metadata entry as a field of its own (`run_date` → `RUN_DATE`).
///
/// When journald is not there (no socket, or a send fails) the record goes to standard error as
/// one readable line instead, so nothing is lost.
package struct JournalLogHandler: LogHandler {
    /// `SYSLOG_IDENTIFIER`.
    package let identifier: String
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    private let fallback: StderrLogHandler

    /// Creates a handler for `label`, writing as `identifier`.
    package init(label: String, identifier: String = "sileme-notifier") {
        self.identifier = identifier
        fallback = StderrLogHandler(label: label)
    }

    /// Whether a journald socket exists at the standard path.
    package static var journalAvailable: Bool {
        FileManager.default.fileExists(atPath: "/run/systemd/journal/socket")
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var fields: [String] = [
            "MESSAGE=\(event.message)",
            "PRIORITY=\(Self.priority(event.level))",
            "SYSLOG_IDENTIFIER=\(identifier)",
            "CODE_FILE=\(event.file)",
            "CODE_LINE=\(event.line)",
            "CODE_FUNC=\(event.function)",
        ]
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for (key, value) in merged {
            guard let name = Self.fieldName(key) else { continue }
            fields.append("\(name)=\(value)")
        }
        if Self.send(fields) != 0 {
            var copy = fallback
            copy.metadata = metadata
            copy.log(event: event)
        }
    }

    /// journald's syslog priority for a swift-log level.
    package static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A journald field name for a metadata key: upper case A–Z, 0–9 and `_`, not starting with
    /// `_` or a digit, at most 64 characters; nil when nothing valid remains.
    package static func fieldName(_ key: String) -> String? {
        // Fast path (every key this program uses): lower-case ASCII letters, digits and `_`,
        // starting with a letter, at most 64 bytes — upper-casing is all it takes.
        let bytes = key.utf8
        if let first = bytes.first, (0x61...0x7A).contains(first), bytes.count <= 64,
           bytes.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }) {
            return String(decoding: bytes.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
        }
        var name = String(key.uppercased().map { ($0.isASCII && ($0.isLetter || $0.isNumber)) ? $0 : "_" })
        while let first = name.first, first == "_" || first.isNumber { name.removeFirst() }
        name = String(name.prefix(64))
        return name.isEmpty ? nil : name
    }

    /// Sends the fields; returns 0 on success, a negative errno otherwise.
    private static func send(_ fields: [String]) -> Int32 {
        let copies = fields.map { strdup($0)! }
        defer { copies.forEach { free($0) } }
        let vectors = copies.map { iovec(iov_base: UnsafeMutableRawPointer($0), iov_len: strlen($0)) }
        return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
    }
}
