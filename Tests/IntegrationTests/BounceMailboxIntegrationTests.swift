import Bounce
import Config
import Foundation
import Testing
import Values

/// The bounce mailbox on a real IMAP and POP3 server (a private Dovecot, Debian's `dovecot-imapd`
/// and `dovecot-pop3d`) through libcurl: real reports listed, read, removed after their effect, an
/// unusable one set aside — kept, counted, no longer listed — and a wrong password refused
/// without being printed.
@Suite("Bounce mailbox over IMAP and POP3", .enabled(if: TestEnvironment.enabled), .serialized)
struct BounceMailboxIntegrationTests {
    static func corpus(_ name: String) throws -> [UInt8] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return Array(try Data(contentsOf: root.appendingPathComponent("SilemeNotifierTests/Fixtures/bounces/\(name)")))
    }

    /// Reads each message of `ids` and settles it as the daemon will: an unparsed one set aside,
    /// any other removed (its effect would be committed first). Returns the verdicts in order.
    static func settle<ID>(_ ids: [ID], read: (ID) throws -> [UInt8]?, remove: (ID) throws -> Void,
                           setAside: (ID) throws -> Void) throws -> [BounceReport.Verdict] {
        try ids.map { id in
            let report = BounceReport.read(try #require(try read(id)))
            if report.verdict == .unparsed { try setAside(id) } else { try remove(id) }
            return report.verdict
        }
    }

    static func mailbox(_ dovecot: Dovecot, password: String? = nil) throws -> IMAPMailbox {
        let server = BounceSettings.Server(host: "127.0.0.1", port: dovecot.port, user: dovecot.user, tls: .tls, folder: "INBOX")
        return try IMAPMailbox(server: server, password: Secret(password ?? dovecot.password), caFile: dovecot.caFile, timeoutSeconds: 10)
    }

    @Test("list, read, remove after the effect, set aside the unparsed; a second session sees the same")
    func readAndSettle() throws {
        try #require(Dovecot.isAvailable, "dovecot-imapd is not installed (scripts/install-deps.sh)")
        let dovecot = try Dovecot()
        defer { dovecot.stop() }
        let files = ["postfix-permanent-550.eml", "sisimai-lhost-gmail-01.eml", "sisimai-rfc3834-01.eml"]
        for (index, file) in files.enumerated() { try dovecot.deliver(try Self.corpus(file), name: "1795\(index).M1P1.relay") }

        let mailbox = try Self.mailbox(dovecot)
        let uids = try mailbox.list()
        #expect(uids.count == 3)
        let verdicts = try Self.settle(uids, read: { try mailbox.read($0, limit: BounceReport.maximumBytes) },
                                       remove: mailbox.remove, setAside: mailbox.setAside)
        #expect(verdicts == [.permanent, .unparsed, .autoReply])
        #expect(try mailbox.list().isEmpty)
        #expect(try mailbox.unparsedCount() == 1)

        let again = try Self.mailbox(dovecot)
        #expect(try again.list().isEmpty && again.unparsedCount() == 1)
        let kept = try FileManager.default.contentsOfDirectory(atPath: "\(dovecot.maildir)/cur")
        #expect(kept.count == 1)
    }

    @Test("a message over the limit is not fetched; a wrong password is refused, unprinted")
    func limitsAndRefusal() throws {
        try #require(Dovecot.isAvailable, "dovecot-imapd is not installed (scripts/install-deps.sh)")
        let dovecot = try Dovecot()
        defer { dovecot.stop() }
        try dovecot.deliver(try Self.corpus("postfix-permanent-550.eml") + [UInt8](repeating: 0x41, count: 64 * 1024), name: "1.M1P1.relay")
        let mailbox = try Self.mailbox(dovecot)
        let uid = try #require(try mailbox.list().first)
        #expect(try mailbox.read(uid, limit: 4096) == nil)
        #expect(try mailbox.list() == [uid])

        let wrong = "Wrong-pw-0815"
        do {
            _ = try Self.mailbox(dovecot, password: wrong).list()
            Issue.record("a wrong password was accepted")
        } catch {
            #expect(!"\(error)".contains(wrong) && !"\(error)".contains(dovecot.password))
        }
    }

    @Test("POP3: list by UIDL, read, remove (committed at once), set aside for this process")
    func pop3() throws {
        try #require(Dovecot.isAvailable, "dovecot-pop3d is not installed (scripts/install-deps.sh)")
        let dovecot = try Dovecot()
        defer { dovecot.stop() }
        let files = ["postfix-delayed-451.eml", "sisimai-lhost-qmail-01.eml", "sisimai-arf-01.eml"]
        for (index, file) in files.enumerated() { try dovecot.deliver(try Self.corpus(file), name: "1795\(index).M1P1.relay") }
        let server = BounceSettings.Server(host: "127.0.0.1", port: dovecot.pop3Port, user: dovecot.user, tls: .tls, folder: "")
        let mailbox = try POP3Mailbox(server: server, password: Secret(dovecot.password), caFile: dovecot.caFile, timeoutSeconds: 10)
        let ids = try mailbox.list()
        #expect(ids.count == 3)
        let verdicts = try Self.settle(ids, read: { try mailbox.read($0, limit: BounceReport.maximumBytes) },
                                       remove: mailbox.remove, setAside: mailbox.setAside)
        #expect(verdicts == [.transient, .unparsed, .complaint])
        #expect(try mailbox.list().isEmpty && mailbox.unparsedCount() == 1)
        let again = try POP3Mailbox(server: server, password: Secret(dovecot.password), caFile: dovecot.caFile, timeoutSeconds: 10)
        let left = try again.list()
        #expect(left.count == 1)
        let kept = try #require(try again.read(left[0], limit: BounceReport.maximumBytes))
        #expect(kept == (try Self.corpus("sisimai-lhost-qmail-01.eml")).crlf)
        #expect(try again.read(left[0], limit: 100) == nil)
    }
}

extension Array where Element == UInt8 {
    /// With every bare LF made CRLF, as a POP3 server hands a message over.
    var crlf: [UInt8] {
        var out: [UInt8] = []
        for (index, byte) in enumerated() {
            if byte == 0x0A && (index == 0 || self[index - 1] != 0x0D) { out.append(0x0D) }
            out.append(byte)
        }
        return out
    }
}
