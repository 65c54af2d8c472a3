import Foundation
import Testing
@testable import Mail

@Suite("OutboxTransport")
struct OutboxTransportTests {
    /// A fresh folder for one test, removed afterwards.
    final class Folder {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sn-outbox-\(UUID().uuidString)").path
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        func files(_ sub: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: "\(path)/\(sub)").sorted() }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A message as the composer renders it (CRLF line ends), with a Message-ID to find it by.
    func message(_ id: String = "sileme.20260113.u1.0123456789abcdef@sileme.app") -> [UInt8] {
        Array("Message-ID: <\(id)>\r\nSubject: test\r\n\r\nbody line 1\r\n\(String(repeating: "x", count: 100_000))\r\n".utf8)
    }

    @Test("a message becomes one complete file in new/, mode 0640, with nothing left in tmp/")
    func writesCompleteFile() throws {
        let folder = try Folder()
        let transport = OutboxTransport(directory: folder.path)
        #expect(try folder.files("").sorted() == ["cur", "new", "tmp"])
        var folderInfo = stat()
        #expect(stat("\(folder.path)/new", &folderInfo) == 0)
        #expect(folderInfo.st_mode & 0o777 == 0o750, "subfolders 0750 whatever the umask")
        let bytes = message()
        let outcome = transport.send(from: "noreply@sileme.app", to: "c@example.com", message: bytes)
        let files = try folder.files("new")
        #expect(files.count == 1)
        let name = try #require(files.first)
        #expect(name.hasSuffix(".eml"))
        #expect(name.contains("P\(getpid())Q"))
        #expect(outcome == .accepted(reply: "outbox: new/\(name)"))
        #expect(FileManager.default.contents(atPath: "\(folder.path)/new/\(name)") == Data(bytes))
        #expect(try folder.files("tmp").isEmpty)
        var info = stat()
        #expect(stat("\(folder.path)/new/\(name)", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o640)
    }

    @Test("every send is a file of its own: the same message twice (a resend) is two files, names never collide")
    func uniqueNames() throws {
        let folder = try Folder()
        let transports = [OutboxTransport(directory: folder.path), OutboxTransport(directory: folder.path)]
        let bytes = message()
        var replies: Set<String> = []
        for _ in 0..<40 {
            for transport in transports {
                let outcome = transport.send(from: "a@b.co", to: "c@d.co", message: bytes)
                guard case .accepted(let reply) = outcome else { Issue.record("not accepted: \(outcome)"); return }
                replies.insert(reply)
            }
        }
        let files = try folder.files("new")
        #expect(files.count == 80)
        #expect(replies.count == 80)
        #expect(Set(files.map { "outbox: new/\($0)" }) == replies)
        #expect(files.allSatisfy { FileManager.default.contents(atPath: "\(folder.path)/new/\($0)") == Data(bytes) })
    }

    @Test("unique names follow Maildir: seconds, microseconds, pid, sequence, host")
    func uniqueNameFormat() {
        #expect(OutboxTransport.uniqueName(seconds: 1768262400, microseconds: 42, pid: 77, sequence: 3, host: "box")
                == "1768262400.M42P77Q3.box")
    }

    @Test("a missing outbox folder is a transient failure (server unavailable) and creates nothing")
    func missingFolder() throws {
        let folder = try Folder()
        let missing = "\(folder.path)/gone"
        let transport = OutboxTransport(directory: missing)
        let outcome = transport.send(from: "a@b.co", to: "c@d.co", message: message())
        #expect(outcome == .transient(reason: "outbox: No such file or directory writing \(missing) (mkdir tmp)",
                                      serverUnavailable: true))
        #expect(!FileManager.default.fileExists(atPath: missing))
        // Once the folder is there (a mount came back), the same transport delivers.
        try FileManager.default.createDirectory(atPath: missing, withIntermediateDirectories: false)
        guard case .accepted = transport.send(from: "a@b.co", to: "c@d.co", message: message()) else {
            Issue.record("not accepted once the folder exists")
            return
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(missing)/new").count == 1)
    }

    @Test("a failure after the bytes were written removes the partial file: nothing in tmp/ or new/")
    func failureLeavesNoPartialFile() throws {
        let folder = try Folder()
        let transport = OutboxTransport(directory: folder.path)
        // new/ replaced by a plain file: the message is written to tmp/ in full, the rename fails.
        try FileManager.default.removeItem(atPath: "\(folder.path)/new")
        #expect(FileManager.default.createFile(atPath: "\(folder.path)/new", contents: Data("in the way".utf8)))
        let outcome = transport.send(from: "a@b.co", to: "c@d.co", message: message())
        #expect(outcome == .transient(reason: "outbox: Not a directory writing \(folder.path) (rename)", serverUnavailable: true))
        #expect(try folder.files("tmp").isEmpty)
        #expect(FileManager.default.contents(atPath: "\(folder.path)/new") == Data("in the way".utf8))
    }

    @Test("check's probe: writable folder accepted and left clean; missing folder transient")
    func verify() throws {
        let folder = try Folder()
        #expect(OutboxTransport(directory: folder.path).verify() == .accepted(reply: "\(folder.path) is writable (probe file created, synced and removed)"))
        #expect(try folder.files("tmp").isEmpty)
        #expect(try folder.files("new").isEmpty)
        guard case .transient(_, true) = OutboxTransport(directory: "\(folder.path)/gone").verify() else {
            Issue.record("a missing folder must fail the probe")
            return
        }
    }

    @Test("an unwritable folder is a transient failure (when not root: root writes through permission bits)",
          .enabled(if: getuid() != 0))
    func readOnlyFolder() throws {
        let folder = try Folder()
        let transport = OutboxTransport(directory: folder.path)
        chmod("\(folder.path)/tmp", 0o555)
        defer { chmod("\(folder.path)/tmp", 0o755) }
        #expect(transport.send(from: "a@b.co", to: "c@d.co", message: message())
                == .transient(reason: "outbox: Permission denied writing \(folder.path) (open)", serverUnavailable: true))
        #expect(try folder.files("new").isEmpty)
    }
}
