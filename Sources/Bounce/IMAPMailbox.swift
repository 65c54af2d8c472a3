import Config
import Foundation
import Values

/// The bounce mailbox on an IMAP server (`BOUNCE_MAILBOX=imaps://user@host/FOLDER`), read through
/// libcurl — already the notifier's SMTP and HTTP client — over implicit TLS, the certificate
/// verified (plain `imap://` only to loopback, as the configuration insists).
///
/// The same contract as `Maildir`: `list` names what waits, `read` fetches one message (not at all
/// when the server says it is larger than the limit), `remove` deletes it — `UID STORE +FLAGS
/// (\Deleted)` then `UID EXPUNGE`, only that message — once the caller committed its effect, and
/// `setAside` keeps an unusable one in place with the keyword `SilemeUnparsed`, which `list` skips and
/// `unparsedCount` counts (a keyword, not a folder, because creating folders needs rights a
/// provider's mailbox may not grant). Messages are named by UID, stable across sessions (RFC 3501).
///
/// Blocking, one thread at a time (it owns one curl handle); errors name the server and what
/// failed, never the password.
package final class IMAPMailbox {
    /// The keyword that marks a message set aside.
    package static let unparsedKeyword = "SilemeUnparsed"

    private let connection: MailboxTransfer
    private let folderURL: String

    /// A step that failed (`MailboxTransfer.Failure`).
    package typealias Failure = MailboxTransfer.Failure

    /// Prepares a handle for `server` with `password`; nothing is connected until the first call.
    /// `caFile`: a PEM bundle to verify the server with (the system's store when nil); `stop`: the
    /// process's stop signal, which gives a transfer in flight up.
    package init(server: BounceSettings.Server, password: Secret, caFile: String? = nil, timeoutSeconds: Int = 30,
                 stop: StopSignal? = nil) throws(Failure) {
        connection = try MailboxTransfer(server: server, password: password, caFile: caFile, timeoutSeconds: timeoutSeconds, stop: stop)
        let folder = server.folder.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: ";?#"))) ?? server.folder
        folderURL = connection.baseURL(scheme: "imap") + "/" + folder
    }

    /// The UIDs of the messages waiting (all but those set aside), in ascending order. A `NOOP`
    /// first: libcurl keeps the session and its selected folder from one poll to the next, and a
    /// server tells a session of new mail on `NOOP` (RFC 3501 §6.1.2) — Dovecot's `UID SEARCH`
    /// alone did not see a message delivered since the last poll.
    package func list() throws(Failure) -> [UInt32] {
        _ = try command("NOOP", operation: "list")
        return Self.searchResult(try command("UID SEARCH NOT KEYWORD \(Self.unparsedKeyword)", operation: "list"))
    }

    /// The bytes of message `uid`; nil when the server gives its size as over `limit` (then it is
    /// not fetched) or the message is gone.
    package func read(_ uid: UInt32, limit: Int) throws(Failure) -> [UInt8]? {
        let reply = try command("UID FETCH \(uid) RFC822.SIZE", operation: "size of \(uid)")
        guard let size = Self.fetchedSize(reply), size <= limit else { return nil }
        return try connection.run(url: "\(folderURL);UID=\(uid)", request: nil, limit: limit, operation: "fetch \(uid)")
    }

    /// Deletes message `uid` (flagged `\Deleted`, then expunged by UID); call only once its
    /// effect is committed.
    package func remove(_ uid: UInt32) throws(Failure) {
        _ = try command("UID STORE \(uid) +FLAGS.SILENT (\\Deleted)", operation: "remove \(uid)")
        _ = try command("UID EXPUNGE \(uid)", operation: "expunge \(uid)")
    }

    /// Keeps message `uid` with the keyword `SilemeUnparsed`: never deleted, no longer listed.
    package func setAside(_ uid: UInt32) throws(Failure) {
        _ = try command("UID STORE \(uid) +FLAGS.SILENT (\(Self.unparsedKeyword))", operation: "set aside \(uid)")
    }

    /// How many messages are set aside.
    package func unparsedCount() throws(Failure) -> Int {
        Self.searchResult(try command("UID SEARCH KEYWORD \(Self.unparsedKeyword)", operation: "count set aside")).count
    }

    /// The UIDs of a `* SEARCH 1 2 3` reply.
    static func searchResult(_ reply: [UInt8]) -> [UInt32] {
        String(decoding: reply, as: UTF8.self).split(whereSeparator: \.isNewline)
            .filter { $0.hasPrefix("* SEARCH") }
            .flatMap { $0.split(separator: " ").dropFirst(2).compactMap { UInt32($0.trimmingCharacters(in: .whitespaces)) } }
            .sorted()
    }

    /// The size in `* N FETCH (UID u RFC822.SIZE s)`; nil when the reply has none.
    static func fetchedSize(_ reply: [UInt8]) -> Int? {
        let words = String(decoding: reply, as: UTF8.self).split(whereSeparator: { " ()\r\n".contains($0) })
        guard let index = words.firstIndex(where: { $0.uppercased() == "RFC822.SIZE" }), index + 1 < words.count else { return nil }
        return Int(words[index + 1])
    }

    private func command(_ request: String, operation: String) throws(Failure) -> [UInt8] {
        try connection.run(url: folderURL, request: request, operation: operation) ?? []
    }
}
