import CCrypto
import Foundation

/// SHA-256 for the Content-Security-Policy's style hash (OpenSSL's `EVP_Digest`).
enum Digest {
    /// `sha256-<base64>` of `text`'s UTF-8 bytes, as a CSP source expression takes it.
    static func sha256Base64(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil) == 1, length == 32 else {
            fatalError("OpenSSL SHA-256 failed")
        }
        return "sha256-" + Data(digest.prefix(32)).base64EncodedString()
    }
}
