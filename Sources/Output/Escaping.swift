import Foundation

/// The one place where text is escaped for a format: CSV fields, JSON string literals and HTML.
/// Every writer of the notifier (the dry run, the history report, `retry --dry-run`, the mail's
/// HTML body) goes through these, and each works on Unicode scalars — never on `Character`s,
/// which would let a quote followed by a combining mark through as one unescaped cluster.
package enum Escaping {
    /// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; a leading
    /// `= + - @` is prefixed with `'` so that a spreadsheet never runs a value as a formula.
    package static func csv(_ value: String) -> String {
        guard let first = value.utf8.first else { return value }
        let formula = "=+-@".utf8.contains(first)
        let quote = value.utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }
        guard formula || quote else { return value }
        let text = formula ? "'" + value : value
        return quote ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }

    /// A JSON string literal for `text` (RFC 8259; U+2028 and U+2029 escaped for JavaScript
    /// readers; non-ASCII kept as UTF-8).
    package static func json(_ text: String) -> String {
        // Fast path: no control character, quote, backslash, or E2 (the lead byte of U+2028/2029
        // and of other punctuation, which the full pass then leaves alone).
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

    /// `text` with `& < > " '` replaced by character references, one scalar at a time (safe in
    /// element content and in quoted attribute values; the same entities Mustache writes).
    package static func html(_ text: String) -> String {
        guard text.utf8.contains(where: { "&<>\"'".utf8.contains($0) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}

extension String {
    /// The string without trailing spaces (terminal table lines).
    package func trimmingTrailingSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
