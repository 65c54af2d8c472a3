import Foundation

/// The bounce mailbox as a Maildir (`BOUNCE_MAILBOX=maildir:/path`): the local MTA delivers each
/// report as one file in `new/`; the daemon lists, reads, and then settles each one.
///
/// Nothing is lost. A message is removed only by `remove`, which the caller calls after
/// the message's effect is committed in the database — a crash in between leaves it in place, and
/// reading it again applies nothing twice (the effects are idempotent: a row already `bounced`
/// stays so). A message that could not be read or matched is never deleted: `setAside` moves it
/// into the `.Unparsed` folder (a Maildir++ subfolder any mail client shows), where a person can
/// look at it and `unparsedCount` counts it for `check` and the metrics.
///
/// Why remove rather than mark seen in `cur/` with the `S` flag: a processed report has done its
/// work, and the one durable record of it is the delivery row; keeping it would make each poll
/// list a growing folder (the issue asks for an empty poll under 5 ms). Messages already in `cur/`
/// (a mail client looked at the folder) are read too. Only `rename(2)` within one file system and
/// `unlink(2)` are used, so every step is atomic.
package struct Maildir: Sendable {
    /// A message waiting in `new/` or `cur/`.
    package struct Message: Sendable, Equatable {
        /// The file name (unique within the Maildir, with any `:2,` flags).
        package var name: String
        /// `new` or `cur`.
        package var folder: String
        /// The file's size in bytes, read before the file is.
        package var size: Int
    }

    /// The Maildir's root (holding `new/`, `cur/`, `tmp/`).
    package let path: String
    /// The folder where messages that cannot be read or matched are kept.
    package static let unparsedFolder = ".Unparsed"

    /// The Maildir at `path`.
    package init(path: String) { self.path = path }

    /// Creates `new/`, `cur/` and `tmp/` of the Maildir and of its `.Unparsed` folder where missing.
    package func create() throws {
        for root in [path, unparsedPath] {
            for sub in ["new", "cur", "tmp"] {
                try FileManager.default.createDirectory(atPath: "\(root)/\(sub)", withIntermediateDirectories: true)
            }
        }
    }

    /// Whether the Maildir is there: `new/` and `cur/` are directories (what `check` reports).
    package var exists: Bool {
        ["new", "cur"].allSatisfy { sub in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: "\(path)/\(sub)", isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }

    /// The messages in `new/` then `cur/`, each folder in name order (the MTA's names begin with the
    /// delivery time, so this is about arrival order); dot files are skipped, as Maildir readers do.
    package func list() throws -> [Message] {
        var messages: [Message] = []
        for folder in ["new", "cur"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: "\(path)/\(folder)").filter { !$0.hasPrefix(".") }.sorted()
            for name in names {
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: "\(path)/\(folder)/\(name)"),
                      attributes[.type] as? FileAttributeType == .typeRegular else { continue }
                messages.append(Message(name: name, folder: folder, size: (attributes[.size] as? Int) ?? 0))
            }
        }
        return messages
    }

    /// The bytes of `message`; nil when it is larger than `limit` (then it is not read at all) or
    /// is gone (another reader took it).
    package func read(_ message: Message, limit: Int) -> [UInt8]? {
        guard message.size <= limit, let handle = FileHandle(forReadingAtPath: file(message)) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: limit + 1), data.count <= limit else { return nil }
        return Array(data)
    }

    /// Deletes `message`; call only once its effect is committed. A message already gone is no error.
    package func remove(_ message: Message) throws {
        guard unlink(file(message)) == 0 || errno == ENOENT else { throw Failure(operation: "remove", name: message.name, code: errno) }
    }

    /// Moves `message` into the `.Unparsed` folder's `cur/`, marked seen (`:2,S`), so that a person
    /// finds it and no later poll reads it again. Never deletes it.
    package func setAside(_ message: Message) throws {
        try FileManager.default.createDirectory(atPath: "\(unparsedPath)/cur", withIntermediateDirectories: true)
        let target = "\(unparsedPath)/cur/\(Self.seenName(message.name))"
        guard rename(file(message), target) == 0 else { throw Failure(operation: "set aside", name: message.name, code: errno) }
    }

    /// How many messages the `.Unparsed` folder holds.
    package func unparsedCount() -> Int {
        ["new", "cur"].reduce(0) { count, sub in
            count + ((try? FileManager.default.contentsOfDirectory(atPath: "\(unparsedPath)/\(sub)"))?.filter { !$0.hasPrefix(".") }.count ?? 0)
        }
    }

    /// A file system step that failed, naming the message file (never its contents).
    package struct Failure: Error, CustomStringConvertible, Equatable {
        package var operation: String
        package var name: String
        package var code: Int32

        package var description: String { "bounce Maildir: cannot \(operation) \(name): \(String(cString: strerror(code)))" }
    }

    /// `name` with the Maildir info `:2,` and the flag `S` (seen) added, keeping other flags sorted.
    package static func seenName(_ name: String) -> String {
        guard let range = name.range(of: ":2,") else { return name + ":2,S" }
        let flags = Set(name[range.upperBound...]).union(["S"])
        return String(name[..<range.upperBound]) + String(flags.sorted())
    }

    private var unparsedPath: String { "\(path)/\(Self.unparsedFolder)" }

    private func file(_ message: Message) -> String { "\(path)/\(message.folder)/\(message.name)" }
}
