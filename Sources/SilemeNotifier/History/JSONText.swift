/// JSON string literals for the history report: the same escaping as the dry run's
/// (`JSONReportWriter.string`: RFC 8259, U+2028/U+2029 escaped, non-ASCII kept as UTF-8), with a
/// fast path for the common value that needs no escaping at all.
enum JSONText {
    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        // ", \, control characters, and E2 (the lead byte of U+2028/U+2029, and of other
        // punctuation, which the full escaper then leaves alone).
        let plain = !text.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }
        return plain ? "\"" + text + "\"" : JSONReportWriter.string(text)
    }
}
