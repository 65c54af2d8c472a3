import CCrypto
import Config
import Foundation

/// Signs webhook requests as the Standard Webhooks specification says: the signed content is
/// `"{webhook-id}.{webhook-timestamp}.{body}"`, its HMAC-SHA256 under the key (the base64-decoded
/// part of a `whsec_…` secret) goes into the `webhook-signature` header as `v1,<base64>`.
///
/// Stateless and thread-safe; the key never prints itself.
public struct WebhookSigner: Sendable {
    private let key: WebhookSettings.SigningKey

    /// A signer with `key` (see `WebhookSettings.SigningKey` for the secret's forms).
    public init(key: WebhookSettings.SigningKey) { self.key = key }

    /// The `webhook-signature` header value for a request: `v1,` and the base64 HMAC-SHA256 of
    /// `"\(id).\(timestamp).\(body)"`. `timestamp` is the `webhook-timestamp` header's value, whole
    /// seconds since 1970.
    public func signature(id: String, timestamp: Int, body: String) -> String {
        "v1," + Data(hmac(Array("\(id).\(timestamp).".utf8) + Array(body.utf8))).base64EncodedString()
    }

    /// HMAC-SHA256 of `message` under the key (OpenSSL's one-shot `HMAC`).
    package func hmac(_ message: [UInt8]) -> [UInt8] {
        Self.hmacSHA256(key: key.bytes, message: message)
    }

    /// HMAC-SHA256 of `message` under `key`: 32 bytes.
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress, messageBytes.count,
                     &digest, &length)
            }
        }
        // HMAC fails only when OpenSSL cannot allocate; a signature of zeros would go out unnoticed.
        guard result != nil, length == 32 else { fatalError("OpenSSL HMAC-SHA256 failed") }
        return Array(digest.prefix(Int(length)))
    }
}
