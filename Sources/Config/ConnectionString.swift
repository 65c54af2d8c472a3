import CLibPQ
import Foundation
import Values

/// `DATABASE_URL` as text: its syntax checked by libpq's own parser when the configuration is
/// loaded (so a malformed one stops startup naming the setting), and libpq's messages about it
/// with every secret taken out.
package enum ConnectionString {
    /// What is wrong with the syntax of `conninfo` (a URI or `key=value` string), in libpq's words
    /// with the secrets taken out; nil when libpq can parse it.
    package static func syntaxProblem(_ conninfo: Secret) -> String? {
        guard !conninfo.value.isEmpty else { return nil }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo.value, &error) else {
            defer { PQfreemem(error) }
            return redacted(error.map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown error", conninfo: conninfo)
        }
        defer { PQconninfoFree(options) }
        // libpq checks a port's digits only when it connects ("invalid integer value"): check them here.
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "port", let raw = option.pointee.val {
                let ports = String(cString: raw).split(separator: ",", omittingEmptySubsequences: false)
                if ports.contains(where: { Int($0).map { !(1...65535).contains($0) } ?? !$0.isEmpty }) {
                    return "invalid port \"\(String(cString: raw))\""
                }
            }
            option += 1
        }
        return nil
    }

    /// libpq's `message` without the connection string or its password: parse errors quote them
    /// ("… in URI: \"postgresql://u:pw@[::1/db\""). Whatever it quotes that holds the password,
    /// the whole string, or a URI's user part is replaced by `<redacted>`.
    package static func redacted(_ message: String, conninfo: Secret) -> String {
        let value = conninfo.value
        var passwords: [String] = []
        // The password of a URI (user:password@host), raw and percent-decoded, and of `password=`.
        if let scheme = value.range(of: "://"), let at = value[scheme.upperBound...].lastIndex(of: "@") {
            let userInfo = value[scheme.upperBound..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                let password = String(userInfo[userInfo.index(after: colon)...])
                passwords += [password, password.removingPercentEncoding ?? ""]
            }
        }
        if let range = value.range(of: "password=") {
            passwords.append(String(value[range.upperBound...].prefix { !$0.isWhitespace }).trimmingCharacters(in: CharacterSet(charactersIn: "'")))
        }
        passwords = passwords.filter { !$0.isEmpty }
        var text = message
        for secret in [value] + passwords.filter({ $0.count >= 4 }) where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        // Anything quoted that still looks like a URI, its user part, or a piece of the password.
        let parts = text.components(separatedBy: "\"")
        return parts.enumerated().map { index, part in
            let secret = part.contains("@") || part.contains("://")
                || passwords.contains { $0.contains(part) && part.count >= 3 || part.contains($0) }
            return index % 2 == 1 && secret ? "<redacted>" : part
        }.joined(separator: "\"")
    }
}
