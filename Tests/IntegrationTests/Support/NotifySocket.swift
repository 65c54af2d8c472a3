import Foundation

/// A Unix datagram socket standing in for systemd's `NOTIFY_SOCKET`: collects every sd_notify
/// message a daemon sends, with the time it arrived.
final class NotifySocket: @unchecked Sendable {
    /// The socket's path (give it to the daemon as `NOTIFY_SOCKET`).
    let path: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [(time: Date, text: String)] = []
    private var closed = false

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw TestFailure("bind(\(path)) failed") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in receiveLoop() }
        thread.start()
    }

    private func receiveLoop() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while !lock.withLock({ closed }) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let text = String(decoding: buffer[0..<count], as: UTF8.self)
            lock.withLock { received.append((Date(), text)) }
        }
    }

    /// Every message so far.
    var messages: [(time: Date, text: String)] { lock.withLock { received } }

    /// Waits up to `timeout` seconds for a message that satisfies `predicate`; returns it.
    @discardableResult
    func waitFor(_ timeout: TimeInterval, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let match = messages.first(where: { predicate($0.text) }) { return match.text }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return nil
    }

    /// Stops listening and removes the socket (the receiving thread ends within 0.2 s).
    func shutdown() {
        lock.withLock { closed = true }
        unlink(path)
    }

    deinit { close(descriptor) }
}
