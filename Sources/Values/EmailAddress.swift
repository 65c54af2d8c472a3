import Foundation

/// An emergency-contact address that passed strict validation and is safe to put in a header.
///
/// Deliberately narrower than RFC 5321: dot-atom ASCII local parts only (no quoted local parts, no
/// SMTPUTF8, none that looks like an RFC 2047 encoded word), host-name domains only (no address
/// literals). An internationalized domain is accepted
/// and stored in its ASCII (Punycode, `xn--…`) form, so `address` is always plain ASCII with no
/// whitespace or control characters.
///
/// `description` is the masked form, so an address interpolated into a log line is never logged in
/// full (docs/interfaces.md); use `address` where the real value is needed.
package struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The part before `@`, exactly as given (case preserved).
    package let localPart: String
    /// The domain, lowercased, with internationalized labels in Punycode (`xn--…`).
    package let domain: String

    /// The normalized address, `localPart@domain`.
    package var address: String { localPart + "@" + domain }

    /// The address for reports and logs: first character of the local part, `***`, then `@domain`
    /// (`alice@example.com` → `a***@example.com`).
    package var masked: String { EmailMasking.mask(address) }

    /// The masked address (see `masked`).
    package var description: String { masked }

    /// Validates and normalizes an address as stored in the database.
    ///
    /// Surrounding ASCII whitespace is trimmed; everything else that is not a plain
    /// `local@host.tld` address is rejected with the first problem found.
    package init(validating raw: String) throws(AddressError) {
        var view = raw.unicodeScalars[...]
        while let first = view.first, Self.isASCIIWhitespace(first) { view.removeFirst() }
        while let last = view.last, Self.isASCIIWhitespace(last) { view.removeLast() }
        let trimmed = String(view)

        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.utf8.count <= 1024 else { throw .tooLong }  // bound all later work
        // Plain ASCII (nearly every address) needs no Unicode property lookups: its controls are
        // U+0000–U+001F and U+007F, its whitespace U+0009–U+000D (controls too) and the space.
        let ascii = trimmed.utf8.allSatisfy { $0 < 0x80 }
        if ascii ? trimmed.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
                 : trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .controlCharacter
        }
        if trimmed.hasPrefix("\"") { throw .quotedLocalPart }
        if ascii ? trimmed.utf8.contains(0x20) : trimmed.unicodeScalars.contains(where: \.properties.isWhitespace) {
            throw .whitespace
        }

        let (local, domainText) = try Self.splitAtSign(trimmed, ascii: ascii)
        guard !local.isEmpty else { throw .missingLocalPart }
        guard !domainText.isEmpty else { throw .missingDomain }
        guard local.unicodeScalars.allSatisfy(\.isASCII) else { throw .nonASCIILocalPart }
        guard local.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || Self.isAtext($0) }) else {
            throw .invalidLocalCharacter
        }
        guard !local.hasPrefix("."), !local.hasSuffix("."),
              !zip(local.utf8, local.utf8.dropFirst()).contains(where: { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }) else {
            throw .misplacedDot
        }
        if local.utf8.contains(UInt8(ascii: "=")), let start = local.range(of: "=?"), local[start.upperBound...].contains("?=") {
            throw .encodedWordLookAlike
        }
        guard local.utf8.count <= 64 else { throw .localPartTooLong }

        let domain = try ascii ? Self.asciiDomain(domainText) : Self.normalizedDomain(domainText)
        guard local.utf8.count + 1 + domain.utf8.count <= 254 else { throw .tooLong }
        self.localPart = local
        self.domain = domain
    }

    /// The text before and after the one `@` (a character of its own: in `a@\u{301}b` the `@`
    /// carries a combining mark and is no separator). ASCII text, whose bytes are its characters,
    /// is split on its bytes.
    private static func splitAtSign(_ text: String, ascii: Bool) throws(AddressError) -> (String, String) {
        guard ascii else {
            let parts = text.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count > 1 else { throw .missingAt }
            guard parts.count == 2 else { throw .multipleAt }
            return (String(parts[0]), String(parts[1]))
        }
        let bytes = text.utf8
        guard let at = bytes.firstIndex(of: UInt8(ascii: "@")) else { throw .missingAt }
        let rest = bytes[bytes.index(after: at)...]
        guard !rest.contains(UInt8(ascii: "@")) else { throw .multipleAt }
        return (String(decoding: bytes[..<at], as: UTF8.self), String(decoding: rest, as: UTF8.self))
    }

    /// Lowercases the domain, converts non-ASCII labels to Punycode and checks the LDH rules.
    private static func normalizedDomain(_ raw: String) throws(AddressError) -> String {
        // Plain ASCII needs no folding: lower-casing is all.
        if raw.utf8.allSatisfy({ $0 < 0x80 }) { return try asciiDomain(raw) }
        // NFKC folds full-width forms (`ｅｘａｍｐｌｅ．com`); U+3002 (。) separates labels as in UTS 46.
        let folded = raw.precomposedStringWithCompatibilityMapping.lowercased().replacingOccurrences(of: "\u{3002}", with: ".")
        let labels = folded.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard labels.count >= 2 else { throw .invalidDomain }

        var asciiLabels: [String] = []
        for label in labels {
            var ascii = label
            if !label.unicodeScalars.allSatisfy(\.isASCII) {
                guard label.unicodeScalars.allSatisfy({ $0.isASCII || isIDNLetter($0) }) else {
                    throw .invalidDomain
                }
                ascii = "xn--" + Punycode.encode(label)
            }
            guard isLDHLabel(ascii) else { throw .invalidDomain }
            asciiLabels.append(ascii)
        }
        if asciiLabels.last!.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { throw .invalidDomain }
        return asciiLabels.joined(separator: ".")
    }

    /// `normalizedDomain` for plain ASCII (nearly every address), in one pass over the bytes:
    /// lower-cased, at least two labels, each an LDH label, the last not all digits.
    private static func asciiDomain(_ raw: String) throws(AddressError) -> String {
        var bytes = Array(raw.utf8)
        var labels = 0
        var start = 0
        for index in 0...bytes.count {
            if index < bytes.count {
                if (0x41...0x5A).contains(bytes[index]) { bytes[index] += 0x20 }
                if bytes[index] != UInt8(ascii: ".") { continue }
            }
            let label = bytes[start..<index]
            guard (1...63).contains(label.count), label.first != 0x2D, label.last != 0x2D,
                  label.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
                throw .invalidDomain
            }
            labels += 1
            if index == bytes.count, label.allSatisfy({ (0x30...0x39).contains($0) }) { throw .invalidDomain }
            start = index + 1
        }
        guard labels >= 2 else { throw .invalidDomain }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Letters, digits and hyphens (lowercase); 1–63 octets; no hyphen at either end. The one
    /// label check of the project (an address's domain, the EHLO name).
    package static func isLDHLabel(_ label: String) -> Bool {
        let bytes = Array(label.utf8)
        guard (1...63).contains(bytes.count), bytes.first != 0x2D, bytes.last != 0x2D else { return false }
        return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// A non-ASCII code point plausible in a domain label: a letter, a combining mark or a digit.
    /// (Not the full IDNA 2008 tables, but it keeps out symbols, punctuation, emoji and format
    /// characters such as bidi overrides.)
    private static func isIDNLetter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .lowercaseLetter, .uppercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .decimalNumber:
            true
        default:
            false
        }
    }

    /// RFC 5322 `atext`: letters, digits and ``!#$%&'*+-/=?^_`{|}~``.
    package static func isAtext(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }

    private static func isASCIIWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        " \t\n\r\u{0B}\u{0C}".unicodeScalars.contains(scalar)
    }
}
