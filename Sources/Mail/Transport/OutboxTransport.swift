import Foundation
import Values
#if canImport(Glibc)
import Glibc
#endif

/// Delivers each message as one RFC 5322 file in a Maildir-style folder (`OUTBOX_DIR`) instead of
/// over SMTP: for sites that hand mail to a local MTA's pickup or queue, or a demo without a mail
/// server (`MAIL_TRANSPORT=outbox`).
///
/// A message is written to `tmp/<unique>` (created exclusively, mode 0640), every byte written and
/// `fsync`ed, then renamed to `new/<unique>.eml` and the `new/` directory `fsync`ed; only then is
/// the send `.accepted`. So a file in `new/` is always complete, and an accepted message survives a
/// power cut. Any failure on the way — disk full, read-only file system, permissions, quota, I/O
/// error — removes what was written (best effort) and is `.transient` with
/// `serverUnavailable: true`: the alert is kept for a retry, never recorded as sent.
///
/// `<unique>` is Maildir's kind, `<seconds>.M<microseconds>P<pid>Q<sequence>.<host>`, never derived
/// from the message: a message sent again after a crash (the at-least-once window of docs/delivery.md) shows
/// up as a second file carrying the same `Message-ID:` header instead of silently replacing the first.
/// The bytes are exactly what SMTP would carry (CRLF line ends, no envelope lines added).
///
/// Blocking; one transport per worker thread (the sequence number is shared by the whole process).
package final class OutboxTransport: MailTransport {
    /// The outbox folder (`OUTBOX_DIR`).
    package let directory: String
    /// Whether `tmp/`, `new/` and `cur/` are known to exist.
    private var prepared = false

    /// The mode of every file written (group-readable for a pickup process in the folder's group),
    /// set explicitly so that a service's `UMask=0077` does not hide the files from it.
    package static let fileMode: mode_t = 0o640
    /// The mode of the subfolders created.
    package static let directoryMode: mode_t = 0o750
    /// The process-wide part of unique names that tells apart files written in the same microsecond.
    private static let sequence = Locked<UInt64>(0)
    /// This machine's name as it appears in unique names, with `/` and `:` escaped as Maildir says.
    private static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        let name = gethostname(&buffer, buffer.count - 1) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        return name.replacingOccurrences(of: "/", with: "\\057").replacingOccurrences(of: ":", with: "\\072")
    }()

    /// Creates a transport writing into `directory`, creating its `tmp/`, `new/` and `cur/` when
    /// missing. A folder that cannot be prepared now is tried again at each send (and the send
    /// fails transiently while it cannot), so a missing mount does not lose alerts.
    package init(directory: String) {
        self.directory = directory
        prepared = (try? prepare()) != nil
    }

    /// Nothing to hear: a write to a local folder does not wait on a server.
    package func hear(_ stop: StopSignal, onWait: @escaping @Sendable () -> Void) {}

    /// Writes `message` into `new/` and says `.accepted` once it is there and synced to disk.
    /// `sender` and `recipient` are already the message's `From:` and `To:` headers.
    package func send(from sender: String, to recipient: String, message: [UInt8]) -> SendOutcome {
        do {
            let name = try deliver(message)
            return .accepted(reply: "outbox: new/\(name)")
        } catch {
            // The next message checks the subfolders again (one may have been removed meanwhile).
            prepared = false
            return .transient(reason: "outbox: \(error.text) writing \(directory) (\(error.step))", serverUnavailable: true)
        }
    }

    /// For `check`: prepares the folder and creates, syncs and removes a probe file in `tmp/`.
    /// Returns `.accepted` when the outbox is writable.
    package func verify() -> SendOutcome {
        do {
            if !prepared { try prepare(); prepared = true }
            let (fd, name) = try createTemporary(suffix: ".probe")
            let path = "\(directory)/tmp/\(name)"
            defer { unlink(path) }
            defer { close(fd) }
            try writeAll(fd, Array("probe\n".utf8))
            try retryingInterrupts("fsync") { fsync(fd) }
            return .accepted(reply: "\(directory) is writable (probe file created, synced and removed)")
        } catch {
            return .transient(reason: "\(error.text) writing \(directory) (\(error.step))", serverUnavailable: true)
        }
    }

    /// A Maildir unique name: `<seconds>.M<microseconds>P<pid>Q<sequence>.<host>`.
    package static func uniqueName(seconds: Int, microseconds: Int, pid: Int32, sequence: UInt64, host: String) -> String {
        "\(seconds).M\(microseconds)P\(pid)Q\(sequence).\(host)"
    }

    // MARK: - The steps

    /// tmp → write → fsync → close → rename into new → fsync new; returns the name in `new/`.
    private func deliver(_ bytes: [UInt8]) throws(OutboxFailure) -> String {
        if !prepared { try prepare(); prepared = true }
        let (fd, unique) = try createTemporary(suffix: "")
        let temporary = "\(directory)/tmp/\(unique)"
        let name = unique + ".eml"
        let final = "\(directory)/new/\(name)"
        var isOpen = true
        var renamed = false
        do throws(OutboxFailure) {
            try writeAll(fd, bytes)
            try retryingInterrupts("fsync") { fsync(fd) }
            isOpen = false
            // Not retried on EINTR: Linux has released the descriptor either way.
            if close(fd) != 0 { throw OutboxFailure(errno, "close") }
            if rename(temporary, final) != 0 { throw OutboxFailure(errno, "rename") }
            renamed = true
            try syncDirectory("\(directory)/new")
            return name
        } catch {
            if isOpen { close(fd) }
            // Take back what was written: a partial file in tmp/, or a file in new/ whose directory
            // entry may not be on disk (the retry writes it again; a pickup that took it in between
            // is the at-least-once window).
            unlink(renamed ? final : temporary)
            throw error
        }
    }

    /// Creates `tmp/`, `new/` and `cur/` where missing (mode 0750 whatever the umask, like the files),
    /// and syncs the outbox folder when it created one.
    private func prepare() throws(OutboxFailure) {
        var created = false
        for sub in ["tmp", "new", "cur"] {
            let path = "\(directory)/\(sub)"
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { continue }
            if mkdir(path, Self.directoryMode) == 0 {
                _ = chmod(path, Self.directoryMode)
                created = true
            } else if errno != EEXIST {
                throw OutboxFailure(errno, "mkdir \(sub)")
            }
        }
        if created { try syncDirectory(directory) }
    }

    /// Opens a new file in `tmp/` exclusively (never one of another writer), mode 0640.
    private func createTemporary(suffix: String) throws(OutboxFailure) -> (Int32, String) {
        var lastError = EEXIST
        for _ in 0..<16 {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let sequence = Self.sequence.withLock { value -> UInt64 in value &+= 1; return value }
            let unique = Self.uniqueName(seconds: now.tv_sec, microseconds: now.tv_nsec / 1000, pid: getpid(),
                                         sequence: sequence, host: Self.host) + suffix
            let fd = open("\(directory)/tmp/\(unique)", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, Self.fileMode)
            if fd >= 0 {
                _ = fchmod(fd, Self.fileMode)
                return (fd, unique)
            }
            lastError = errno
            if lastError != EEXIST && lastError != EINTR { break }
        }
        throw OutboxFailure(lastError, "open")
    }

    /// Writes every byte, going on after short writes and interrupted calls.
    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(OutboxFailure) {
        var failure: OutboxFailure?
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    // write() returning 0 for a non-empty buffer is not supposed to happen; treat it as no space.
                    failure = OutboxFailure(written < 0 ? errno : ENOSPC, "write")
                    return
                }
            }
        }
        if let failure { throw failure }
    }

    /// Makes a rename into `path` durable.
    private func syncDirectory(_ path: String) throws(OutboxFailure) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw OutboxFailure(errno, "open directory") }
        defer { close(fd) }
        try retryingInterrupts("fsync directory") { fsync(fd) }
    }

    /// Runs a call returning 0 or -1 with `errno`, again while it is interrupted.
    private func retryingInterrupts(_ step: String, _ call: () -> Int32) throws(OutboxFailure) {
        while call() != 0 {
            let code = errno
            if code != EINTR { throw OutboxFailure(code, step) }
        }
    }
}
