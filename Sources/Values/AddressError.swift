/// Why a string is not an acceptable emergency-contact address (see `EmailAddress`).
///
/// Each case has a short, human `reason` that is safe to log: it never repeats the address.
package enum AddressError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing left after trimming surrounding whitespace.
    case empty
    /// A control character (CR, LF, NUL, TAB, DEL, C1…) anywhere in the value.
    case controlCharacter
    /// Whitespace inside the address.
    case whitespace
    /// No `@` at all.
    case missingAt
    /// More than one `@`.
    case multipleAt
    /// A quoted local part such as `"john doe"@example.com`; valid RFC 5321, but never needed here.
    case quotedLocalPart
    /// Nothing before the `@`.
    case missingLocalPart
    /// Nothing after the `@`.
    case missingDomain
    /// A non-ASCII local part (SMTPUTF8 addresses are not supported).
    case nonASCIILocalPart
    /// A character outside RFC 5322 `atext` (e.g. `<>()[],;:\"`) in the local part.
    case invalidLocalCharacter
    /// A local part with `=?` … `?=`: valid `atext`, but parsers (Python's `email` among them)
    /// decode it as an RFC 2047 encoded word, so the `To:` line would read as another address.
    case encodedWordLookAlike
    /// A leading, trailing or doubled dot in the local part.
    case misplacedDot
    /// A local part longer than 64 octets.
    case localPartTooLong
    /// An address longer than 254 octets.
    case tooLong
    /// A domain that is not a valid host name (LDH labels, at least two, TLD not all-numeric).
    case invalidDomain

    /// A short human explanation, e.g. "missing @".
    package var reason: String {
        switch self {
        case .empty: "empty"
        case .controlCharacter: "contains a control character"
        case .whitespace: "contains whitespace"
        case .missingAt: "missing @"
        case .multipleAt: "more than one @"
        case .quotedLocalPart: "quoted local part not supported"
        case .missingLocalPart: "missing local part"
        case .missingDomain: "missing domain"
        case .nonASCIILocalPart: "non-ASCII local part"
        case .invalidLocalCharacter: "invalid character in local part"
        case .encodedWordLookAlike: "local part looks like an encoded word (=?…?=)"
        case .misplacedDot: "leading, trailing or double dot in local part"
        case .localPartTooLong: "local part too long"
        case .tooLong: "too long"
        case .invalidDomain: "invalid domain"
        }
    }

    /// The same as `reason`.
    package var description: String { reason }
}
