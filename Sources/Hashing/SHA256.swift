import CCrypto
import Foundation

/// SHA-256 (OpenSSL's `EVP_Digest`).
package enum SHA256 {
    /// The digest of `bytes`: 32 bytes. It fails only when OpenSSL cannot allocate.
    package static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil) == 1, length == 32 else {
            fatalError("OpenSSL SHA-256 failed")
        }
        return Array(digest.prefix(32))
    }
}
