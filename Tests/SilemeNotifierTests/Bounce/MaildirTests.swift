import Bounce
import Foundation
import Testing

/// The bounce Maildir on temporary folders filled from the real corpus: what is listed, read,
/// removed after its effect, and set aside — never deleted — when it cannot be used.
@Suite("Bounce Maildir")
struct MaildirTests {
    /// A fresh Maildir in a temporary folder, with `files` of the corpus delivered to `new/`
    /// under MTA-like names (and one in `cur/`, as a mail client leaves it).
    static func maildir(_ files: [String], inCur: String? = nil) throws -> Maildir {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bounce-maildir-\(UUID().uuidString)").path
        let maildir = Maildir(path: root)
        try maildir.create()
        for (index, file) in files.enumerated() {
            try Data(try BounceCorpus.bytes(file)).write(to: URL(fileURLWithPath: "\(root)/new/17957\(index).M1P1.relay"))
        }
        if let inCur {
            try Data(try BounceCorpus.bytes(inCur)).write(to: URL(fileURLWithPath: "\(root)/cur/17950.M1P1.relay:2,S"))
        }
        return maildir
    }

    @Test("new/ then cur/, in name order; tmp/ and dot files are not messages")
    func listing() throws {
        let maildir = try Self.maildir(["postfix-permanent-550.eml", "postfix-delayed-451.eml"], inCur: "sisimai-arf-01.eml")
        defer { try? FileManager.default.removeItem(atPath: maildir.path) }
        try Data("partial".utf8).write(to: URL(fileURLWithPath: "\(maildir.path)/tmp/17959.M1P1.relay"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: "\(maildir.path)/new/.hidden"))
        let messages = try maildir.list()
        #expect(messages.map(\.folder) == ["new", "new", "cur"])
        #expect(messages.map(\.name) == ["179570.M1P1.relay", "179571.M1P1.relay", "17950.M1P1.relay:2,S"])
        let first = try #require(maildir.read(messages[0], limit: BounceReport.maximumBytes))
        #expect(BounceReport.read(first).verdict == .permanent)
        #expect(messages[0].size == first.count)
    }

    @Test("a handled message is removed; an unusable one is set aside, seen, and counted — never deleted")
    func settling() throws {
        let maildir = try Self.maildir(["postfix-permanent-550.eml", "sisimai-lhost-gmail-01.eml"])
        defer { try? FileManager.default.removeItem(atPath: maildir.path) }
        let messages = try maildir.list()
        try maildir.remove(messages[0])
        try maildir.remove(messages[0])  // already gone: no error
        try maildir.setAside(messages[1])
        #expect(try maildir.list().isEmpty)
        #expect(maildir.unparsedCount() == 1)
        let kept = "\(maildir.path)/.Unparsed/cur/179571.M1P1.relay:2,S"
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: kept))) == (try BounceCorpus.bytes("sisimai-lhost-gmail-01.eml")))
    }

    @Test("a message over the limit is not read")
    func sizeLimit() throws {
        let maildir = try Self.maildir([])
        defer { try? FileManager.default.removeItem(atPath: maildir.path) }
        try Data(repeating: 0x41, count: 5 * 1024 * 1024).write(to: URL(fileURLWithPath: "\(maildir.path)/new/1.big"))
        let message = try #require(try maildir.list().first)
        #expect(message.size == 5 * 1024 * 1024)
        #expect(maildir.read(message, limit: BounceReport.maximumBytes) == nil)
    }

    @Test("the whole corpus goes through: each message read and settled exactly once")
    func wholeCorpus() throws {
        let maildir = try Self.maildir(BounceCorpus.names)
        defer { try? FileManager.default.removeItem(atPath: maildir.path) }
        var handled = 0
        for message in try maildir.list() {
            let report = BounceReport.read(try #require(maildir.read(message, limit: BounceReport.maximumBytes)))
            if report.verdict == .unparsed || report.verdict == .tooLarge { try maildir.setAside(message) } else {
                try maildir.remove(message)
                handled += 1
            }
        }
        let unparsed = BounceReportTests.expectations.filter { $0.verdict == .unparsed }.count
        #expect(handled + unparsed == BounceCorpus.names.count)
        #expect(maildir.unparsedCount() == unparsed)
        #expect(try maildir.list().isEmpty)
    }

    @Test("seen flags are added once and kept sorted")
    func flags() {
        #expect(Maildir.seenName("1.M1.host") == "1.M1.host:2,S")
        #expect(Maildir.seenName("1.M1.host:2,T") == "1.M1.host:2,ST")
        #expect(Maildir.seenName("1.M1.host:2,FS") == "1.M1.host:2,FS")
    }

    @Test("a missing Maildir is reported, not created by listing")
    func missing() {
        let maildir = Maildir(path: "/nonexistent-\(UUID().uuidString)")
        #expect(!maildir.exists)
        #expect(throws: (any Error).self) { try maildir.list() }
    }
}
