import CCrypto

/// HMAC-SHA256, the project's one MAC (OpenSSL's one-shot `HMAC`, from the libcrypto libcurl
/// already loads): the webhook's Standard Webhooks signatures and the acknowledgement links'
/// tokens both rest on it.
package enum HMACSHA256 {
    /// The MAC of `message` under `key`: 32 bytes. HMAC fails only when OpenSSL cannot allocate;
    /// a MAC of zeros would sign anything and accept forgeries, so that stops the process.
    package static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress, messageBytes.count,
                     &digest, &length)
            }
        }
        guard result != nil, length == 32 else { fatalError("OpenSSL HMAC-SHA256 failed") }
        return Array(digest.prefix(Int(length)))
    }

    /// Whether `a` and `b` are the same bytes, in time that depends on the length only: a MAC is
    /// compared with this, so the time of a refusal does not tell a forger how many bytes were right.
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
