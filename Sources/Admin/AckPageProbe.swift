import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `check`'s look at the acknowledgement page's listener (`ACK_LISTEN`): a `GET /healthz` on the
/// address, which the daemon's listener answers `ok`. Blocking, bounded by `timeout`.
enum AckPageProbe {
    /// The listener's answer: nil when it answers `ok`, else what went wrong, in words.
    static func problem(host: String, port: Int, timeout: TimeInterval = 2) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else { return "cannot resolve \(host)" }
        defer { freeaddrinfo(found) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { return "no socket" }
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            return "nothing listens (\(String(cString: strerror(errno)))): is the daemon running with ACK_LISTEN?"
        }
        let request = "GET /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var reply = [UInt8](repeating: 0, count: 512)
        var received = 0
        while received < reply.count {
            let n = reply[received...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += n
        }
        let text = String(decoding: reply.prefix(received), as: UTF8.self)
        return text.hasPrefix("HTTP/1.1 200") && text.hasSuffix("ok\n") ? nil
            : "it does not answer as the acknowledgement page (\(text.split(separator: "\r\n").first ?? "no answer"))"
    }
}
