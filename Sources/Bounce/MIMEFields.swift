/// The header fields of a MIME entity, unfolded, looked up by name without regard to case.
///
/// Values are read as UTF-8 (other bytes become U+FFFD): a report's fields are ASCII, and a stray
/// 8-bit byte in a human-written one must not stop the reading. Encoded words (RFC 2047) are left
/// as written; nothing here needs them decoded.
package struct MIMEFields: Sendable {
    /// One field: its name as written and its value with the line breaks of folding removed.
    package struct Field: Sendable, Equatable {
        package var name: String
        package var value: String
        /// `name` lower-cased, made once: every look-up compares with it.
        let key: String

        /// Creates the value.
        package init(name: String, value: String) {
            self.name = name
            self.value = value
            key = name.lowercased()
        }
    }

    /// A `Content-Type` value: type, subtype and parameters (names lower-cased, quotes removed).
    package struct ContentType: Sendable, Equatable {
        package var type: String
        package var subtype: String
        package var parameters: [String: String]

        /// `type/subtype`.
        package var mediaType: String { "\(type)/\(subtype)" }

        /// Reads a field value; `text/plain` when it is missing or not `type/subtype`.
        package init(_ value: String?) {
            let pieces = MIMEFields.splitParameters(value ?? "")
            let media = (pieces.first ?? "").trimmed.lowercased().split(separator: "/", maxSplits: 1)
            guard media.count == 2, !media[0].isEmpty, !media[1].isEmpty else {
                (type, subtype, parameters) = ("text", "plain", [:])
                return
            }
            type = String(media[0]).trimmed
            subtype = String(media[1]).trimmed
            var parameters: [String: String] = [:]
            for piece in pieces.dropFirst() {
                guard let equals = piece.firstIndex(of: "=") else { continue }
                let name = piece[..<equals].trimmed.lowercased()
                var value = piece[piece.index(after: equals)...].trimmed
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                    value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
                }
                if parameters[name] == nil { parameters[name] = value }
            }
            self.parameters = parameters
        }
    }

    /// The fields in order.
    package var all: [Field]

    /// The fields `all`.
    package init(all: [Field]) { self.all = all }

    /// The first value of `name` (case-insensitive).
    package subscript(_ name: String) -> String? {
        let lower = name.lowercased()
        return all.first { $0.key == lower }?.value
    }

    /// Every value of `name`, in order.
    package func values(_ name: String) -> [String] {
        let lower = name.lowercased()
        return all.filter { $0.key == lower }.map(\.value)
    }

    /// The `Content-Type`.
    package var contentType: ContentType { ContentType(self["content-type"]) }

    /// Reads the fields at the start of `bytes` up to the first empty line; returns them and where
    /// the body starts (after that line; the end when there is none). A line that is neither a
    /// field nor a continuation (an mbox `From ` line) is skipped.
    static func read(_ bytes: ArraySlice<UInt8>) -> (MIMEFields, Int) {
        var fields: [Field] = []
        var current: [UInt8]?
        var lineStart = bytes.startIndex
        func finish() {
            guard let line = current, let colon = line.firstIndex(of: 0x3A) else { return }
            let name = String(decoding: line[..<colon], as: UTF8.self).trimmed
            guard !name.isEmpty, !name.contains(" ") else { return }
            fields.append(Field(name: name, value: String(decoding: line[(colon + 1)...], as: UTF8.self).trimmed))
        }
        while lineStart < bytes.endIndex {
            let lineEnd = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.endIndex
            var line = bytes[lineStart..<lineEnd]
            if line.last == 0x0D { line.removeLast() }
            let next = min(lineEnd + 1, bytes.endIndex)
            if line.isEmpty {
                finish()
                return (MIMEFields(all: fields), next)
            }
            if line.first == 0x20 || line.first == 0x09, current != nil {
                current! += line
            } else {
                finish()
                current = Array(line)
            }
            lineStart = next
        }
        finish()
        return (MIMEFields(all: fields), bytes.endIndex)
    }

    /// Groups of fields separated by empty lines, as in a `message/delivery-status` body.
    static func groups(_ bytes: [UInt8]) -> [MIMEFields] {
        var groups: [MIMEFields] = []
        var start = 0
        while start < bytes.count {
            let lineEnd = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            if bytes[start..<lineEnd].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                start = lineEnd + 1
                continue
            }
            let (fields, next) = read(bytes[start...])
            if !fields.all.isEmpty { groups.append(fields) }
            start = next
        }
        return groups
    }

    /// `value` split at semicolons outside double quotes.
    static func splitParameters(_ value: String) -> [Substring] {
        var pieces: [Substring] = []
        var quoted = false, escaped = false
        var start = value.startIndex
        for index in value.indices {
            let character = value[index]
            if escaped { escaped = false; continue }
            if character == "\\" && quoted { escaped = true } else if character == "\"" { quoted.toggle() } else if character == ";" && !quoted {
                pieces.append(value[start..<index])
                start = value.index(after: index)
            }
        }
        pieces.append(value[start...])
        return pieces
    }
}

extension StringProtocol {
    /// Without surrounding blanks (space, tab, CR, LF).
    var trimmed: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" || first == "\r" || first == "\n" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" || last == "\r" || last == "\n" { view.removeLast() }
        return String(view)
    }
}
