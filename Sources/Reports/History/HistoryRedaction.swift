import Values

/// What a report may show of the database's text: control characters are replaced (a hostile name
/// cannot move a terminal's cursor), and unless full emails were asked for, addresses are masked —
/// the contact's, and any address inside a server reply or error (`a***@example.com`).
package struct HistoryRedaction: Sendable, Equatable {
    /// Show addresses in full (`--full-emails`).
    package let fullEmails: Bool

    /// Creates the redaction of a report.
    package init(fullEmails: Bool) { self.fullEmails = fullEmails }

    /// A contact address as the report shows it.
    package func email(_ raw: String?) -> String? {
        guard let raw else { return nil }
        return fullEmails ? Printable.text(raw) : EmailMasking.mask(raw)
    }

    /// An identifier that is not a person's address though it may contain `@` (a `Message-ID`,
    /// `host:pid`, a run mode): printable, never masked.
    package func plain(_ raw: String?) -> String? { raw.map(Printable.text) }

    /// Free text (a name, a reply, an error): printable, with addresses masked unless full emails.
    package func text(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let printable = Printable.text(raw)
        return fullEmails ? printable : Self.maskingAddresses(in: printable)
    }

    /// `text` with every word that looks like an address (`x@y`) masked; the word ends at
    /// whitespace or one of `<>()[],;:"'`, so `<zhang@example.com>:` becomes `<z***@example.com>:`.
    /// Works on UTF-8 bytes; a text with non-ASCII whitespace goes through `maskingAddressesByScalar`.
    package static func maskingAddresses(in text: String) -> String {
        guard text.utf8.contains(0x40) else { return text }
        if text.utf8.contains(where: { $0 >= 0x80 }),
           text.unicodeScalars.contains(where: { !$0.isASCII && $0.properties.isWhitespace }) {
            return maskingAddressesByScalar(in: text)
        }
        func ends(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x09...0x0D, 0x20, 0x3C, 0x3E, 0x28, 0x29, 0x5B, 0x5D, 0x2C, 0x3B, 0x3A, 0x22, 0x27: true
            default: false
            }
        }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if ends(bytes[i]) {
                out.append(bytes[i])
                i += 1
                continue
            }
            var j = i
            while j < bytes.count, !ends(bytes[j]) { j += 1 }
            if let at = bytes[i..<j].firstIndex(of: 0x40), at != i, at + 1 != j {
                out.append(contentsOf: EmailMasking.mask(String(decoding: bytes[i..<j], as: UTF8.self)).utf8)
            } else {
                out.append(contentsOf: bytes[i..<j])
            }
            i = j
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `maskingAddresses(in:)` scalar by scalar, for texts with non-ASCII whitespace.
    package static func maskingAddressesByScalar(in text: String) -> String {
        var result = String.UnicodeScalarView()
        var word = String.UnicodeScalarView()
        func flush() {
            if let at = word.firstIndex(of: "@"), at != word.startIndex, word.index(after: at) != word.endIndex {
                result.append(contentsOf: EmailMasking.mask(String(word)).unicodeScalars)
            } else {
                result.append(contentsOf: word)
            }
            word.removeAll()
        }
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace || "<>()[],;:\"'".unicodeScalars.contains(scalar) {
                flush()
                result.append(scalar)
            } else {
                word.append(scalar)
            }
        }
        flush()
        return String(result)
    }
}
