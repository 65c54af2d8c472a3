import Foundation

/// Masks contact addresses for logs and reports: `alice@example.com` → `a***@example.com`.
/// Works on raw, possibly invalid, values too: without an `@` only the first character is kept.
/// The one masking of the notifier: validated addresses (`EmailAddress.masked`), the dry run, the
/// history report and `retry` all go through `mask`.
package enum EmailMasking {
    /// The masked form of `raw`: its first character, `***`, and everything from its last `@`
    /// (control characters made printable, surrounding spaces trimmed).
    package static func mask(_ raw: String) -> String {
        // Trimming is needed only when an end is a space or not ASCII (a Unicode space).
        let plainEnds = raw.utf8.first.map { $0 > 0x20 && $0 < 0x7F } == true
            && raw.utf8.last.map { $0 > 0x20 && $0 < 0x7F } == true
        let cleaned = Printable.text(plainEnds ? raw : raw.trimmingCharacters(in: .whitespaces))
        // Printable ASCII (nearly every address): each byte is a character.
        if let first = cleaned.utf8.first, cleaned.utf8.allSatisfy({ $0 < 0x80 }) {
            let head = String(decoding: CollectionOfOne(first), as: UTF8.self) + "***"
            guard let at = cleaned.utf8.lastIndex(of: UInt8(ascii: "@")) else { return head }
            return head + cleaned[at...]
        }
        guard let first = cleaned.first else { return "" }
        guard let at = cleaned.lastIndex(of: "@") else { return "\(first)***" }
        return "\(first)***\(cleaned[at...])"
    }
}

/// Text from the database made safe for a terminal, a report or the journal: every control
/// character (general category Cc: U+0000–U+001F, U+007F–U+009F) replaced by U+FFFD, so that a
/// hostile value cannot move a terminal's cursor or forge a line.
package enum Printable {
    /// `text` with its control characters replaced; `text` itself when it has none.
    package static func text(_ text: String) -> String {
        // Scan the UTF-8 bytes: below 0x20, DEL, or a C1 control (C2 80…C2 9F).
        var previous: UInt8 = 0
        var clean = true
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) { clean = false; break }
            previous = byte
        }
        if clean { return text }
        func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? "\u{FFFD}" : $0 }))
    }
}
