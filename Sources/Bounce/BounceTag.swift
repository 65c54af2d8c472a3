import Config
import Hashing
import Values

/// The envelope sender that names a delivery row (VERP): `BOUNCE_ADDRESS`'s
/// `local@domain` becomes `local+TAG@domain`, and the report of a dead mailbox comes back to it.
///
/// TAG is the row id in base 32 followed by an 80-bit HMAC-SHA256 of it under `BOUNCE_SECRET`,
/// also in base 32: lower-case letters and digits only, so it survives any MTA's handling of local
/// parts (some lower-case them; `0-9a-v` has no case to lose), and 17–29 characters. The MAC makes
/// a tag unguessable: a report to a forged or altered tag (a stranger's attempt to mark a contact
/// undeliverable) names no row. `row(in:)` does the same work for every well-formed tag and compares
/// in constant time, so its time tells a forger nothing.
package struct BounceTag: Sendable {
    private let key: [UInt8]
    /// `BOUNCE_ADDRESS`.
    package let address: EmailAddress

    /// Base-32 characters of the MAC (10 bytes = 80 bits = 16 characters).
    static let macCharacters = 16
    /// The most base-32 characters of a row id (a positive `Int64` has 63 bits).
    static let idCharacters = 13
    /// The digits of the tag, in order (RFC 4648's "extended hex" alphabet, lower case).
    static let digits = Array("0123456789abcdefghijklmnopqrstuv".utf8)

    /// The tags of `address` under `secret`.
    package init(address: EmailAddress, secret: Secret) {
        self.address = address
        key = Array(secret.value.utf8)
    }

    /// The tags of the configured bounce address and key.
    package init(settings: BounceSettings) { self.init(address: settings.address, secret: settings.secret) }

    /// The tag of delivery row `row` (a positive id).
    package func tag(row: Int64) -> String { tag(row, purpose: .bounce) }

    /// What a tag names: a delivery row, or a canary (`sileme.canaries`). Each is signed under its
    /// own prefix, so a row's tag never verifies as a canary's, nor the other way round.
    enum Purpose: String {
        case bounce, canary
    }

    private func tag(_ number: Int64, purpose: Purpose) -> String {
        precondition(number > 0, "BounceTag: an id is positive")
        let id = Self.base32(number: UInt64(number))
        return id + Self.base32(bytes: mac(id, purpose: purpose))
    }

    /// The envelope sender of row `row`: `local+TAG@domain`.
    package func envelopeSender(row: Int64) -> String {
        "\(address.localPart)+\(tag(row: row))@\(address.domain)"
    }

    /// The row `tag` names, when this key made it; nil for anything else (forged, altered,
    /// truncated, another key's, not a tag at all).
    package func row(tag: String) -> Int64? { number(tag: tag, purpose: .bounce) }

    /// The tag of canary `id` (`X-Sileme-Canary`, and the canary's envelope sender after the `+`).
    package func canaryTag(id: Int64) -> String { tag(id, purpose: .canary) }

    /// The envelope sender of canary `id`: `local+TAG@domain`, so that its bounce comes back too.
    package func canarySender(id: Int64) -> String {
        "\(address.localPart)+\(canaryTag(id: id))@\(address.domain)"
    }

    /// The canary `tag` names, when this key made it as a canary's; nil for anything else.
    package func canary(tag: String) -> Int64? { number(tag: tag.trimmed, purpose: .canary) }

    /// The canary named by `recipient`, an address a report was sent to (as `row(in:)` reads it).
    package func canary(in recipient: String) -> Int64? {
        taggedPart(of: recipient).flatMap { number(tag: $0, purpose: .canary) }
    }

    private func number(tag: String, purpose: Purpose) -> Int64? {
        let text = Array(tag.lowercased().utf8)
        guard text.count > Self.macCharacters, text.count <= Self.macCharacters + Self.idCharacters,
              text.allSatisfy({ Self.digits.contains($0) }) else { return nil }
        let id = String(decoding: text.dropLast(Self.macCharacters), as: UTF8.self)
        let given = Array(text.suffix(Self.macCharacters))
        let expected = Array(Self.base32(bytes: mac(id, purpose: purpose)).utf8)
        guard HMACSHA256.constantTimeEqual(expected, given), id.first != "0", let number = Self.number(base32: id),
              number > 0, number <= UInt64(Int64.max) else { return nil }
        return Int64(number)
    }

    /// The row named by `recipient`, an address a report was sent to: it must be this bounce
    /// address's mailbox (local part case-insensitively, domain exactly after lower-casing) with a
    /// valid tag after the `+`. Angle brackets and surrounding blanks are ignored.
    package func row(in recipient: String) -> Int64? {
        taggedPart(of: recipient).flatMap { row(tag: $0) }
    }

    /// What follows the `+` in `recipient` when it is this bounce address's mailbox.
    private func taggedPart(of recipient: String) -> String? {
        var text = Substring(recipient).drop { $0 == " " || $0 == "<" }
        while let last = text.last, last == " " || last == ">" { text.removeLast() }
        guard let at = text.lastIndex(of: "@") else { return nil }
        let local = text[..<at], domain = text[text.index(after: at)...]
        guard domain.lowercased() == address.domain, let plus = local.firstIndex(of: "+"),
              local[..<plus].lowercased() == address.localPart.lowercased() else { return nil }
        return String(local[local.index(after: plus)...])
    }

    private func mac(_ id: String, purpose: Purpose) -> [UInt8] {
        Array(HMACSHA256.mac(key: key, message: Array("\(purpose.rawValue):".utf8) + Array(id.utf8)).prefix(10))
    }

    /// `number` in base 32, most significant digit first, no leading zeros.
    static func base32(number: UInt64) -> String {
        var value = number, out: [UInt8] = []
        repeat {
            out.append(digits[Int(value & 31)])
            value >>= 5
        } while value > 0
        return String(decoding: out.reversed(), as: UTF8.self)
    }

    /// `bytes` in base 32, five bits a digit (10 bytes → 16 digits).
    static func base32(bytes: [UInt8]) -> String {
        var out: [UInt8] = [], buffer: UInt32 = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                out.append(digits[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(digits[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The number `text` spells in base 32; nil past 64 bits.
    static func number(base32 text: String) -> UInt64? {
        var value: UInt64 = 0
        for byte in text.utf8 {
            guard let digit = digits.firstIndex(of: byte), value >> 59 == 0 else { return nil }
            value = value << 5 | UInt64(digit)
        }
        return value
    }
}
