/// A user's name cleaned for mails and reports: one line, no control or invisible format characters,
/// single spaces, at most `maxLength` characters.
///
/// Cleaning works on Unicode scalars:
/// - whitespace of any kind (CR, LF, TAB, NEL, U+2028, ideographic space…) becomes one space, runs
///   collapse, and the ends are trimmed;
/// - other control characters (general category Cc: NUL, ESC, DEL, C1) are removed;
/// - format characters (Cf: bidi embeddings/overrides/isolates, LRM/RLM/ALM, zero-width space,
///   BOM, soft hyphen, tag characters…) are removed, except ZWJ (U+200D, which joins emoji such as
///   👨‍👩‍👧) and ZWNJ (U+200C, which Persian and Indic names need).
package struct DisplayName: Sendable, Hashable, CustomStringConvertible {
    /// The most characters (grapheme clusters) a name keeps, the trailing "…" included.
    package static let maxLength = 100

    /// The cleaned name.
    package let value: String

    /// The cleaned name.
    package var description: String { value }

    /// Cleans `raw`; throws `NameError.empty` when nothing visible is left.
    package init(cleaning raw: String) throws(NameError) {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in raw.unicodeScalars {
            // Printable ASCII and the CJK and Hangul blocks (most names) need no property lookup:
            // none of them is whitespace, a control or a format character.
            if Self.isPlainVisible(scalar.value) {
                if pendingSpace { scalars.append(" ") }
                pendingSpace = false
                scalars.append(scalar)
                continue
            }
            if scalar.properties.isWhitespace {
                pendingSpace = !scalars.isEmpty
                continue
            }
            switch scalar.properties.generalCategory {
            case .control:
                continue
            case .format where scalar != "\u{200D}" && scalar != "\u{200C}":
                continue
            default:
                if pendingSpace { scalars.append(" ") }
                pendingSpace = false
                scalars.append(scalar)
            }
        }
        // A name of nothing but joiners is as empty as no name.
        guard scalars.contains(where: { $0 != "\u{200D}" && $0 != "\u{200C}" }) else { throw .empty }
        var name = String(scalars)
        // Grapheme clusters are never more than scalars: most names need no counting.
        if scalars.count > Self.maxLength && name.count > Self.maxLength {
            var kept = name.prefix(Self.maxLength - 1)
            while kept.last == " " { kept.removeLast() }
            name = kept + "…"
        }
        value = name
    }

    /// U+0021–U+007E, U+3400–U+9FFF (CJK ideographs, Yijing symbols), U+AC00–U+D7A3 (Hangul).
    private static func isPlainVisible(_ value: UInt32) -> Bool {
        (0x21...0x7E).contains(value) || (0x3400...0x9FFF).contains(value) || (0xAC00...0xD7A3).contains(value)
    }
}
