import Foundation
import Hashing

/// The page's hashes for its Content-Security-Policy.
enum Digest {
    /// `sha256-<base64>` of `text`'s UTF-8 bytes, as a CSP source expression takes it.
    static func sha256Base64(_ text: String) -> String {
        "sha256-" + Data(SHA256.digest(Array(text.utf8))).base64EncodedString()
    }
}
