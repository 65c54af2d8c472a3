import Foundation
import Values
#if canImport(Glibc)
import Glibc
#endif

/// The machine's names, for the EHLO greeting (`SMTP_HELO_NAME`).
enum HostName {
    /// The fully qualified name, as `hostname -f` finds it: the canonical name the resolver gives
    /// for `gethostname()` (normally from `/etc/hosts`). The short name when it has no domain to
    /// add, and `localhost` when the machine has no name at all. Looked up once per process (the
    /// resolver may ask DNS).
    static let fullyQualified: String = lookUpFullyQualified()

    private static func lookUpFullyQualified() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let short = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard !short.isEmpty else { return "localhost" }
        var hints = addrinfo()
        hints.ai_flags = AI_CANONNAME
        hints.ai_family = AF_UNSPEC
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(short, nil, &hints, &result) == 0, let first = result else { return short }
        defer { freeaddrinfo(result) }
        guard let canonical = first.pointee.ai_canonname.map({ String(cString: $0) }),
              canonical.contains("."), isDomain(canonical) else { return short }
        return canonical
    }

    /// Whether `name` is a domain as EHLO takes it: dot-separated labels of letters, digits and
    /// hyphens (1–63 each, no hyphen first or last), at most 253 characters.
    static func isDomain(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.lowercased().split(separator: ".", omittingEmptySubsequences: false)
            .allSatisfy { EmailAddress.isLDHLabel(String($0)) }
    }

    /// Whether `name` is an address literal as EHLO takes it: `[192.0.2.1]` or `[IPv6:2001:db8::1]`.
    static func isAddressLiteral(_ name: String) -> Bool {
        guard name.hasPrefix("["), name.hasSuffix("]") else { return false }
        var inner = String(name.dropFirst().dropLast())
        var v4 = in_addr(), v6 = in6_addr()
        if inner.hasPrefix("IPv6:") {
            inner.removeFirst(5)
            return inet_pton(AF_INET6, inner, &v6) == 1
        }
        return inet_pton(AF_INET, inner, &v4) == 1
    }
}
