import Foundation
import Testing
@testable import Values
@testable import Mail

/// docs/mail.md: what the contact receives, parsed by an independent parser (Python's `email`).
@Suite("Mail format on real servers", .enabled(if: TestEnvironment.enabled))
struct MessageIntegrationTests {
    @Test("Chinese, emoji and CR/LF names: decoded Subject, From name and body equal the template's text, no extra header",
          arguments: ["王小明", "李四 👨‍👩‍👧 😀", "Eve\r\nBcc: victim@example.com\r\nX-Evil: 1"])
    func parsedMessage(name: String) throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUser(name: name, email: mail.address("contact"), checkIns: ["2026-01-10"])
        let result = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(database: db))
        #expect(result.status == 0)
        let delivery = try #require(try mail.deliveries().first)
        let parsed = try MailParser.parse(delivery.raw)
        let clean = try DisplayName(cleaning: name).value
        #expect(parsed.defects.isEmpty)
        #expect(parsed.headers["Subject"] == ["[一键打卡] 关于 \(clean) 的签到提醒"])
        #expect(parsed.fromDisplayName == "一键打卡团队")
        #expect(parsed.fromAddress == "noreply@sileme.app")
        let expected = try MailTemplates(directory: nil).render(TemplateVariables(
            userName: clean, missDays: 2, lastCheckInDate: CalendarDate(parsing: "2026-01-10")!,
            runDate: CalendarDate(parsing: "2026-01-13")!, appName: "一键打卡")).text
        #expect(parsed.text?.replacingOccurrences(of: "\r\n", with: "\n") == expected)
        #expect(Set(parsed.headers.keys) == ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version",
                                             "Auto-Submitted", "X-Auto-Response-Suppress", "Content-Type",
                                             "Content-Transfer-Encoding"])
        #expect(parsed.headers["Auto-Submitted"] == ["auto-generated"])
        #expect(parsed.headers["To"] == [mail.address("contact")])
        #expect(parsed.headers["Message-ID"]?.first == delivery.messageID)
        // The raw header block is pure ASCII with CRLF line ends.
        let raw = String(decoding: delivery.raw, as: UTF8.self)
        let head = try #require(raw.components(separatedBy: "\r\n\r\n").first)
        let asciiOnly = head.unicodeScalars.allSatisfy { $0.isASCII }
        #expect(asciiOnly)
        #expect(!head.contains("Bcc") && !head.contains("X-Evil"))
    }

    @Test("an HTML template makes a multipart/alternative message with both bodies")
    func htmlTemplate() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tpl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let shipped = TestEnvironment.root.appendingPathComponent("config/templates")
        for file in ["subject.mustache", "body.txt.mustache"] {
            try FileManager.default.copyItem(at: shipped.appendingPathComponent("zh-Hans").appendingPathComponent(file), to: dir.appendingPathComponent(file))
        }
        try FileManager.default.copyItem(at: shipped.appendingPathComponent("body.html.mustache.example"),
                                         to: dir.appendingPathComponent("body.html.mustache"))
        let db = try TestDatabase()
        let mail = try Mailbox()
        try db.addUser(name: "<script>张三", email: mail.address("html"), checkIns: ["2026-01-10"])
        let env = try NotifierProcess.environment(database: db, ["TEMPLATE_DIR": dir.path])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 0)
        let parsed = try MailParser.parse(try #require(try mail.deliveries().first).raw)
        #expect(parsed.contentType == "multipart/alternative")
        #expect(parsed.html?.contains("<strong>&lt;script&gt;张三</strong>") == true)
        #expect(parsed.text?.contains("<script>张三 已连续 2 天") == true)
    }
}
