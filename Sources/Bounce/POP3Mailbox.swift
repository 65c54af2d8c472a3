import Config
import Foundation
import Values

/// The bounce mailbox on a POP3 server (`BOUNCE_MAILBOX=pop3s://user@host`), read through libcurl
/// over implicit TLS, the certificate verified.
///
/// The same contract as `Maildir` and `IMAPMailbox`, within what POP3 can do. Messages are named by
/// their `UIDL` id, stable across sessions; each call finds the message's number in the current
/// session afresh. `remove` sends `DELE` and ends the session (`QUIT`), since POP3 deletes only
/// then — so a removal is done when `remove` returns, and a crash before leaves the message. POP3
/// has no flags or folders: `setAside` leaves an unusable message on the server and remembers its
/// id for this process's life (`list` skips it, `unparsedCount` counts it); after a restart it is
/// read and set aside again, never deleted.
package final class POP3Mailbox {
    private let connection: MailboxTransfer
    private let baseURL: String
    private var setAsideIDs: Set<String> = []

    /// A step that failed (`MailboxTransfer.Failure`).
    package typealias Failure = MailboxTransfer.Failure

    /// Prepares a handle for `server` with `password`; nothing is connected until the first call.
    /// `caFile` and `stop` as for `IMAPMailbox`.
    package init(server: BounceSettings.Server, password: Secret, caFile: String? = nil, timeoutSeconds: Int = 30,
                 stop: StopSignal? = nil) throws(Failure) {
        connection = try MailboxTransfer(server: server, password: password, caFile: caFile, timeoutSeconds: timeoutSeconds, stop: stop)
        baseURL = connection.baseURL(scheme: "pop3")
    }

    /// The ids of the messages waiting (all but those set aside), in the server's order.
    package func list() throws(Failure) -> [String] {
        try numbers().map(\.id).filter { !setAsideIDs.contains($0) }
    }

    /// The bytes of message `id`; nil when the server gives its size as over `limit` (then it is
    /// not fetched) or the message is gone.
    package func read(_ id: String, limit: Int) throws(Failure) -> [UInt8]? {
        guard let number = try numbers().first(where: { $0.id == id })?.number else { return nil }
        let sizes = Self.pairs(try connection.run(url: "\(baseURL)/", request: "LIST", operation: "size of \(id)") ?? [])
        guard let size = sizes.first(where: { $0.number == number }).flatMap({ Int($0.id) }), size <= limit else { return nil }
        return try connection.run(url: "\(baseURL)/\(number)", request: nil, limit: limit + 64, operation: "fetch \(id)")
    }

    /// Deletes message `id` and ends the session, which commits the deletion; call only once its
    /// effect is committed. A message already gone is no error.
    package func remove(_ id: String) throws(Failure) {
        guard let number = try numbers().first(where: { $0.id == id })?.number else { return }
        _ = try connection.run(url: "\(baseURL)/", request: "DELE \(number)", noBody: true, close: true, operation: "remove \(id)")
    }

    /// Leaves message `id` on the server and skips it from now on.
    package func setAside(_ id: String) { setAsideIDs.insert(id) }

    /// How many messages this process has set aside (and are still on the server).
    package func unparsedCount() throws(Failure) -> Int {
        Set(try numbers().map(\.id)).intersection(setAsideIDs).count
    }

    /// The session's message numbers and their `UIDL` ids.
    private func numbers() throws(Failure) -> [(number: Int, id: String)] {
        Self.pairs(try connection.run(url: "\(baseURL)/", request: "UIDL", operation: "list") ?? [])
    }

    /// The `NUMBER WORD` lines of a POP3 multi-line reply (`UIDL`: the id; `LIST`: the size).
    static func pairs(_ reply: [UInt8]) -> [(number: Int, id: String)] {
        String(decoding: reply, as: UTF8.self).split(whereSeparator: \.isNewline).compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 2, let number = Int(words[0]) else { return nil }
            return (number, String(words[1]).trimmingCharacters(in: .whitespaces))
        }
    }
}
