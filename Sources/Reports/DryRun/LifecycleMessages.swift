import Foundation
import Store
import Values

/// The other messages a dry run lists after its users, in the order a run sends them: those the
/// lifecycle owes (`owed`: all-clears, follow-ups, introductions, unfinished alerts — read whole,
/// as a run reads them), then the new alerts' webhook events (`hooks`), one per user to send to.
/// The events are kept on disk until the report comes to them: held in memory, and joined into
/// one string to print, they grew with the users (~1.3 KB a user to send to: ~220 MB at ten
/// million users with the webhook on; bench/README.md).
package struct LifecycleMessages {
    /// The messages the lifecycle owes.
    package var owed: [LifecycleStore.Due]
    /// The new alerts' webhook events, in the order the users were listed.
    package var hooks: HookSpill?

    /// Creates the list.
    package init(owed: [LifecycleStore.Due] = [], hooks: HookSpill? = nil) {
        self.owed = owed
        self.hooks = hooks
    }

    /// Whether there is no message at all.
    package var isEmpty: Bool { owed.isEmpty && (hooks?.count ?? 0) == 0 }

    /// Hands each message to `body`, the owed ones first; the events are read back from disk.
    package func forEach(_ body: (LifecycleStore.Due) throws -> Void) throws {
        for due in owed { try body(due) }
        try hooks?.forEach(body)
    }
}

/// A new alert's webhook event per user, written to an anonymous temporary file (`tmpfile(3)`:
/// unlinked at once, gone when closed or when the process ends) and read back in order. A
/// record is the user's id, raw name, `m` and `L`: what `LifecycleStore.Due.webhookAlert` makes.
package final class HookSpill {
    private let file: UnsafeMutablePointer<FILE>
    /// How many events were written.
    package private(set) var count = 0

    /// Why the spill failed: the temporary file could not be made, written or read.
    package struct Failure: Error, CustomStringConvertible {
        /// What failed and the system's reason.
        package let description: String
    }

    /// Opens the temporary file.
    package init() throws {
        guard let file = tmpfile() else {
            throw Failure(description: "cannot make a temporary file for the webhook events: \(String(cString: strerror(errno)))")
        }
        self.file = file
    }

    deinit { fclose(file) }

    /// Writes `due` (a webhook alert event) after the others.
    package func append(_ due: LifecycleStore.Due) throws {
        var record: [UInt8] = []
        record.reserveCapacity(64)
        func put(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { record.append(contentsOf: $0) } }
        func put(_ text: String?) {
            guard let text else { return put(Int64(-1)) }
            put(Int64(text.utf8.count))
            record.append(contentsOf: text.utf8)
        }
        put(due.userID)
        put(due.rawName)
        put(Int64(due.missedDays))
        put(Int64(due.lastCheckIn.dayNumber))
        guard fwrite(record, 1, record.count, file) == record.count else {
            throw Failure(description: "cannot write a webhook event to the temporary file: \(String(cString: strerror(errno)))")
        }
        count += 1
    }

    /// Hands each event to `body` in the order written.
    package func forEach(_ body: (LifecycleStore.Due) throws -> Void) throws {
        guard count > 0 else { return }
        guard fflush(file) == 0, fseek(file, 0, SEEK_SET) == 0 else {
            throw Failure(description: "cannot read the webhook events back: \(String(cString: strerror(errno)))")
        }
        func read(_ length: Int) throws -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: length)
            guard length == 0 || fread(&bytes, 1, length, file) == length else {
                throw Failure(description: "the temporary file of webhook events ends early")
            }
            return bytes
        }
        func number() throws -> Int64 { Int64(littleEndian: try read(8).withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }) }
        func text() throws -> String? {
            let length = try number()
            return length < 0 ? nil : String(decoding: try read(Int(length)), as: UTF8.self)
        }
        for _ in 0..<count {
            guard let userID = try text() else { throw Failure(description: "a webhook event without its user in the temporary file") }
            let rawName = try text()
            let missedDays = Int(try number())
            let lastCheckIn = CalendarDate(dayNumber: Int(try number()))
            try body(.webhookAlert(userID: userID, rawName: rawName, missedDays: missedDays, lastCheckIn: lastCheckIn))
        }
        // Written to again after a read, the file goes on at its end.
        fseek(file, 0, SEEK_END)
    }
}
