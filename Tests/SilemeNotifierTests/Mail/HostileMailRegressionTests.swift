import Foundation
import Testing
@testable import Values
@testable import Config
@testable import Mail

/// The problems the hostile-input fuzz test (`HostileMailFuzzTests`) found in the mail code, each
/// pinned down with the input that showed it.
@Suite("Mail: hostile-input regressions")
struct HostileMailRegressionTests {
    static func variables(_ name: String) -> TemplateVariables {
        TemplateVariables(userName: name, missDays: 2, lastCheckInDate: CalendarDate(parsing: "2026-01-10")!,
                          runDate: CalendarDate(parsing: "2026-01-13")!, appName: "一键打卡")
    }

    @Test("a 10 KB user id (a text key in a hand-made database) gives a Message-ID well under 998 octets")
    func longUserID() {
        let id = MailMessage.makeMessageID(userID: String(repeating: "id-", count: 3500), runDate: "2026-01-13", domain: "sileme.app")
        #expect(id.utf8.count == "sileme.20260113.".count + 64 + ".0123456789abcdef@sileme.app".count)
        #expect(id.hasPrefix("sileme.20260113." + String(repeating: "id-", count: 21) + "i."))
    }

    @Test("a user id with nothing usable in it leaves no empty part (`..`) in the Message-ID")
    func emptyUserID() {
        let id = MailMessage.makeMessageID(userID: "〬محمد🝕 ", runDate: "2026-01-13", domain: "sileme.app")
        #expect(!id.contains(".."))
        #expect(id.split(separator: "@").first?.split(separator: ".", omittingEmptySubsequences: false).count == 3)
    }

    @Test("a combining mark or joiner after a space stays in the subject (it was dropped with the space)",
          arguments: [" \u{301}x", "\u{200D} =?x?=", " \u{301}"])
    func subjectKeepsMarks(raw: String) throws {
        let name = try DisplayName(cleaning: raw).value
        let subject = try MailTemplates(directory: nil).render(Self.variables(name)).subject
        #expect(Array(subject.unicodeScalars) == Array("[一键打卡] 关于 \(name) 的签到提醒".unicodeScalars))
    }

    @Test("the subject is still one line with single spaces")
    func subjectSingleLine() {
        #expect(MailTemplates.singleLine(" a \r\n\t b\u{2028}\u{3000}c \n") == "a b c")
        #expect(MailTemplates.singleLine("") == "")
    }

    @Test("the HTML body escapes a quote or angle bracket even when a combining mark follows it")
    func htmlEscapesClusters() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tpl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "{{user_name}}".write(to: dir.appendingPathComponent("subject.mustache"), atomically: true, encoding: .utf8)
        try "{{user_name}}".write(to: dir.appendingPathComponent("body.txt.mustache"), atomically: true, encoding: .utf8)
        try "<p title=\"{{user_name}}\">{{{user_name}}}</p>".write(
            to: dir.appendingPathComponent("body.html.mustache"), atomically: true, encoding: .utf8)
        let name = "\"\u{301} onmouseover=alert(1) <\u{301}b>&'"
        let mail = try MailTemplates(directory: dir.path).render(Self.variables(name))
        let escaped = "&quot;\u{301} onmouseover=alert(1) &lt;\u{301}b&gt;&amp;&#39;"
        #expect(mail.html.map { Array($0.unicodeScalars) } == Array("<p title=\"\(escaped)\">\(escaped)</p>".unicodeScalars))
        #expect(mail.text == name, "the text body is not escaped")
    }

    @Test("FROM_NAME is cleaned like a user's name: no line break, control or bidi character reaches From")
    func fromNameCleaned() throws {
        var configuration = NotifierConfiguration()
        configuration.fromEmail = "noreply@sileme.app"
        configuration.fromName = "Team\r\nBcc: x@y\u{1B}\u{202E}"
        #expect(try MailComposer(configuration.mail, templates: MailTemplates(directory: nil)).fromName == "Team Bcc: x@y")
        configuration.fromName = "\u{200B}\u{202E} \t"
        #expect(try MailComposer(configuration.mail, templates: MailTemplates(directory: nil)).fromName == "")
    }

    @Test("a local part that looks like an encoded word is refused",
          arguments: [("=?utf-8?q?a?=@example.com", AddressError.encodedWordLookAlike), ("x=?y?=@example.com", .encodedWordLookAlike)])
    func encodedWordLocalPart(raw: String, error: AddressError) {
        #expect(throws: error) { try EmailAddress(validating: raw) }
    }

    @Test("=? or ?= alone, or in the other order, stays a valid local part", arguments: ["a=?b@example.com", "a?=b=?c@example.com"])
    func encodedWordPiecesAllowed(raw: String) throws {
        #expect(try EmailAddress(validating: raw).address == raw)
    }
}
