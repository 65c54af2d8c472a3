import Config
import Hashing
import Values

/// What the daemon's reader needs of a bounce mailbox, whichever it is (`Maildir`, `IMAPMailbox`,
/// `POP3Mailbox`): the messages waiting, one message's bytes, its removal once its effect is
/// committed, and keeping aside one that cannot be used. One reader, three mailboxes: the rule
/// that nothing is removed before its effect is committed is written once, in the reader.
package protocol BounceMailbox: AnyObject {
    /// How the mailbox names a message (a file, a UID, a `UIDL` id).
    associatedtype Message

    /// The messages waiting, oldest first (never those set aside).
    func list() throws -> [Message]
    /// The bytes of `message`; nil when it is larger than `limit` (not read) or gone.
    func read(_ message: Message, limit: Int) throws -> [UInt8]?
    /// Deletes `message`; only after its effect is committed.
    func remove(_ message: Message) throws
    /// Keeps `message` for a person; never deletes it, and `list` no longer returns it.
    func setAside(_ message: Message) throws
    /// How many messages are kept aside.
    func unparsedCount() throws -> Int
    /// `message` as a log line names it (a file name, `UID 12`): never its contents.
    func name(_ message: Message) -> String
}

/// The configured mailbox (`BOUNCE_MAILBOX`).
package enum BounceMailboxes {
    /// Opens the mailbox `settings` names, its server verified against `BOUNCE_CA_FILE` when set
    /// (nothing is connected until its first use). Once `stop` is raised, a transfer in flight is
    /// given up: a stopping daemon does not wait out a silent server's timeout.
    package static func open(_ settings: BounceSettings, timeoutSeconds: Int = 30, stop: StopSignal? = nil) throws -> any BounceMailbox {
        let password = settings.password ?? Secret("")
        switch settings.mailbox {
        case .maildir(let path):
            return MaildirMailbox(Maildir(path: path))
        case .imap(let server):
            return try IMAPMailbox(server: server, password: password, caFile: settings.caFile, timeoutSeconds: timeoutSeconds, stop: stop)
        case .pop3(let server):
            return try POP3Mailbox(server: server, password: password, caFile: settings.caFile, timeoutSeconds: timeoutSeconds, stop: stop)
        }
    }

    /// The identity of a message's bytes (SHA-256, hex): the same report read twice is one event.
    package static func fingerprint(_ bytes: [UInt8]) -> String {
        SHA256.digest(bytes).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// A `Maildir` as a `BounceMailbox` (a class: the reader holds one mailbox for its life).
package final class MaildirMailbox: BounceMailbox {
    package let maildir: Maildir

    package init(_ maildir: Maildir) { self.maildir = maildir }

    package func list() throws -> [Maildir.Message] { try maildir.list() }
    package func read(_ message: Maildir.Message, limit: Int) -> [UInt8]? { maildir.read(message, limit: limit) }
    package func remove(_ message: Maildir.Message) throws { try maildir.remove(message) }
    package func setAside(_ message: Maildir.Message) throws { try maildir.setAside(message) }
    package func unparsedCount() -> Int { maildir.unparsedCount() }
    package func name(_ message: Maildir.Message) -> String { "\(message.folder)/\(message.name)" }
}

extension IMAPMailbox: BounceMailbox {
    package func name(_ message: UInt32) -> String { "UID \(message)" }
}

extension POP3Mailbox: BounceMailbox {
    package func name(_ message: String) -> String { "UIDL \(message)" }
}
