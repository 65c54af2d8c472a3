import Config
import Foundation
import Hashing

/// Signs webhook requests as the Standard Webhooks specification says: the signed content is
/// `"{webhook-id}.{webhook-timestamp}.{body}"`, its HMAC-SHA256 under the key (the base64-decoded
/// part of a `whsec_…` secret) goes into the `webhook-signature` header as `v1,<base64>`.
///
/// Stateless and thread-safe; the key never prints itself.
package struct WebhookSigner: Sendable {
    private let key: WebhookSettings.SigningKey

    /// A signer with `key` (see `WebhookSettings.SigningKey` for the secret's forms).
    package init(key: WebhookSettings.SigningKey) { self.key = key }

    /// The `webhook-signature` header value for a request: `v1,` and the base64 HMAC-SHA256 of
    /// `"\(id).\(timestamp).\(body)"`. `timestamp` is the `webhook-timestamp` header's value, whole
    /// seconds since 1970.
    package func signature(id: String, timestamp: Int, body: String) -> String {
        "v1," + Data(hmac(Array("\(id).\(timestamp).".utf8) + Array(body.utf8))).base64EncodedString()
    }

    /// HMAC-SHA256 of `message` under the key (OpenSSL's one-shot `HMAC`).
    package func hmac(_ message: [UInt8]) -> [UInt8] {
        HMACSHA256.mac(key: key.bytes, message: message)
    }
}
