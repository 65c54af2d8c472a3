import Config
import Foundation
import Hashing
import Values

/// The key of the acknowledgement links (`ACK_SECRET`): signs tokens, checks them, tags contact
/// addresses, and makes the page's anti-forgery field — all HMAC-SHA256 under the one key, each
/// with its own label so that no value made for one purpose passes for another.
///
/// `verify` treats every bad token alike — not base64, the wrong length, a forged or truncated
/// signature, expired — and does the same work for each (the MAC is always computed and compared
/// in constant time), so neither the answer nor its time tells a forger which part was wrong.
package struct AckKey: Sendable {
    private let key: [UInt8]

    /// Bytes of a contact tag in a token.
    package static let tagLength = 10
    /// Bytes of the MAC in a token (128 bits).
    static let macLength = 16

    /// The key of `secret` (`ACK_SECRET`'s bytes as given).
    package init(secret: Secret) { key = Array(secret.value.utf8) }

    /// The token's text: base64url (no padding) of the payload and its MAC. 68 characters.
    package func sign(_ token: AckToken) -> String {
        guard let payload = token.payload else { preconditionFailure("AckKey.sign: user id is not a UUID") }
        return Self.base64URL(payload + mac(payload))
    }

    /// The token `text` names, when it is one this key signed and `today` is before its expiry;
    /// nil for anything else.
    package func verify(_ text: String, today: CalendarDate) -> AckToken? {
        let length = AckToken.payloadLength + Self.macLength
        let decoded = Self.decodeBase64URL(text)
        let bytes = decoded?.count == length ? decoded! : [UInt8](repeating: 0, count: length)
        let payload = Array(bytes.prefix(AckToken.payloadLength))
        let matches = Self.constantTimeEqual(mac(payload), Array(bytes.suffix(Self.macLength)))
        guard decoded?.count == length, matches, let token = AckToken(payload: payload) else { return nil }
        return today < token.expiresOn ? token : nil
    }

    /// The tag of `contact` (trimmed and lower-cased first, as the delivery key holds it).
    package func tag(contact: String) -> [UInt8] {
        let normalised = contact.trimmingCharacters(in: .whitespaces).lowercased()
        return Array(hmac(Array("contact:".utf8) + Array(normalised.utf8)).prefix(Self.tagLength))
    }

    /// Whether `tag` is the tag of `contact` (constant time).
    package func tag(_ tag: [UInt8], matches contact: String) -> Bool {
        Self.constantTimeEqual(self.tag(contact: contact), tag)
    }

    /// The page's anti-forgery field for the token `text`: only a page this key rendered for that
    /// link carries it, so a POST made elsewhere (a forged form, a scanner) is refused.
    package func formField(token text: String) -> String {
        Self.base64URL(Array(hmac(Array("form:".utf8) + Array(text.utf8)).prefix(16)))
    }

    /// Whether `field` is `formField(token:)` of `text` (constant time).
    package func formFieldMatches(_ field: String, token text: String) -> Bool {
        Self.constantTimeEqual(Array(formField(token: text).utf8), Array(field.utf8))
    }

    private func mac(_ payload: [UInt8]) -> [UInt8] {
        Array(hmac(Array("token:".utf8) + payload).prefix(Self.macLength))
    }

    private func hmac(_ message: [UInt8]) -> [UInt8] { HMACSHA256.mac(key: key, message: message) }

    /// Equal length and bytes, in time that depends on the length only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool { HMACSHA256.constantTimeEqual(a, b) }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of base64url `text` (no padding); nil when it is not that or is too long to be a token.
    static func decodeBase64URL(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 128, text.utf8.allSatisfy({ byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
        }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
