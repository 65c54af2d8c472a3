import Foundation
import Rule
import Store
import Values

/// The other messages a dry run lists after its users, in the order a run sends them: those the
/// lifecycle owes (all-clears, follow-ups, introductions, unfinished alerts, …: `owed`, then
/// `spilled`), then the new alerts' webhook events (`hooks`), one per user to send to. Both long
/// lists are kept on disk until the report comes to them: held in memory the events grew with the
/// users (~1.3 KB a user to send to: ~220 MB at ten million users with the webhook on), and the
/// owed messages with what is owed (~1.9 KB each: a day's all-clears after a long stop;
/// bench/history/dry-run-memory.md, bench/history/lifecycle-memory.md).
package struct LifecycleMessages {
    /// Owed messages held in memory (a report of a few).
    package var owed: [LifecycleStore.Due]
    /// The owed messages as the dry run read them, a page at a time, onto disk.
    package var spilled: DueSpill?
    /// The new alerts' webhook events, in the order the users were listed.
    package var hooks: DueSpill?

    /// Creates the list.
    package init(owed: [LifecycleStore.Due] = [], spilled: DueSpill? = nil, hooks: DueSpill? = nil) {
        self.owed = owed
        self.spilled = spilled
        self.hooks = hooks
    }

    /// Whether there is no message at all.
    package var isEmpty: Bool { owed.isEmpty && (spilled?.count ?? 0) == 0 && (hooks?.count ?? 0) == 0 }

    /// Hands each message to `body`, the owed ones first; the spilled ones are read back from disk.
    package func forEach(_ body: (LifecycleStore.Due) throws -> Void) throws {
        for due in owed { try body(due) }
        try spilled?.forEach(body)
        try hooks?.forEach(body)
    }
}

/// Messages a dry run lists, written to an anonymous temporary file (`tmpfile(3)`: unlinked at
/// once, gone when closed or when the process ends) and read back in order. A record is what a
/// report shows of a message and what a webhook alert's event is made of
/// (`LifecycleStore.Due.listed`): its kind, channel, user id, raw name, contact, date, the
/// `Message-ID` it answers, `m` and `L`.
///
/// Sendable unchecked, and it must stay so: it wraps a C `FILE*` that moves between threads — a
/// run date's reader writes it on its own thread (one reader at a time), the report reads it
/// back after the readers ended — and is used by one thread at a time, which the compiler cannot see.
package final class DueSpill: @unchecked Sendable {
    private let file: UnsafeMutablePointer<FILE>
    /// How many messages were written.
    package private(set) var count = 0

    /// Why the spill failed: the temporary file could not be made, written or read.
    package struct Failure: Error, CustomStringConvertible {
        /// What failed and the system's reason.
        package let description: String
    }

    /// Opens the temporary file.
    package init() throws {
        guard let file = tmpfile() else {
            throw Failure(description: "cannot make a temporary file for the dry run's messages: \(String(cString: strerror(errno)))")
        }
        self.file = file
    }

    deinit { fclose(file) }

    /// A date's record: none.
    private static let noDate = Int64.min

    /// Writes `due` after the others.
    package func append(_ due: LifecycleStore.Due) throws {
        var record: [UInt8] = []
        record.reserveCapacity(96)
        func put(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { record.append(contentsOf: $0) } }
        func put(_ text: String?) {
            guard let text else { return put(Int64(-1)) }
            put(Int64(text.utf8.count))
            record.append(contentsOf: text.utf8)
        }
        put(due.kind.rawValue)
        put(due.channel.rawValue)
        put(due.userID)
        put(due.rawName)
        put(due.contact)
        put(due.notificationDate.map { Int64($0.dayNumber) } ?? Self.noDate)
        put(due.inReplyTo)
        put(Int64(due.missedDays))
        put(Int64(due.lastCheckIn.dayNumber))
        guard fwrite(record, 1, record.count, file) == record.count else {
            throw Failure(description: "cannot write a message to the temporary file: \(String(cString: strerror(errno)))")
        }
        count += 1
    }

    /// Hands each message to `body` in the order written.
    package func forEach(_ body: (LifecycleStore.Due) throws -> Void) throws {
        guard count > 0 else { return }
        guard fflush(file) == 0, fseek(file, 0, SEEK_SET) == 0 else {
            throw Failure(description: "cannot read the dry run's messages back: \(String(cString: strerror(errno)))")
        }
        func read(_ length: Int) throws -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: length)
            guard length == 0 || fread(&bytes, 1, length, file) == length else {
                throw Failure(description: "the temporary file of the dry run's messages ends early")
            }
            return bytes
        }
        func number() throws -> Int64 { Int64(littleEndian: try read(8).withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }) }
        func text() throws -> String? {
            let length = try number()
            return length < 0 ? nil : String(decoding: try read(Int(length)), as: UTF8.self)
        }
        for _ in 0..<count {
            guard let kind = try text().flatMap(DeliveryJob.Kind.init(rawValue:)),
                  let channel = try text().flatMap(DeliveryJob.Channel.init(rawValue:)),
                  let userID = try text() else { throw Failure(description: "a message without its kind, channel or user in the temporary file") }
            let rawName = try text()
            let contact = try text() ?? ""
            let date = try number()
            let inReplyTo = try text()
            let missedDays = Int(try number())
            let lastCheckIn = CalendarDate(dayNumber: Int(try number()))
            try body(.listed(kind: kind, channel: channel, userID: userID, rawName: rawName, contact: contact,
                             notificationDate: date == Self.noDate ? nil : CalendarDate(dayNumber: Int(date)), inReplyTo: inReplyTo,
                             missedDays: missedDays, lastCheckIn: lastCheckIn))
        }
        // Written to again after a read, the file goes on at its end.
        fseek(file, 0, SEEK_END)
    }
}
