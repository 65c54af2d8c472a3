import Foundation
import Testing
@testable import Values
@testable import Config
@testable import Mail

/// The mail after a pause (docs/guards.md): the default templates say what happened.
@Suite("Mail after a pause")
struct PauseTemplateTests {
    let variables = TemplateVariables(userName: "孙七", missDays: 2, lastCheckInDate: CalendarDate(parsing: "2026-01-10")!,
                                      runDate: CalendarDate(parsing: "2026-01-23")!, appName: "一键打卡",
                                      pausedUntil: CalendarDate(parsing: "2026-01-20")!)

    @Test("the built-in text: away until P, then m days without a check-in; the shipped files render the same")
    func afterPause() throws {
        let mail = try MailTemplates(directory: nil).render(variables)
        #expect(mail.text.contains("孙七 曾设置外出暂停至 2026-01-20，暂停结束后已连续 2 天未在\"一键打卡\"应用中签到。\n"))
        let fromFiles = try MailTemplates(directory: MailTemplatesTests.configTemplates).render(variables)
        #expect(fromFiles == mail)
    }

    @Test("paused_until is a variable only in a mail after a pause")
    func variable() {
        #expect(variables.dictionary["paused_until"] == "2026-01-20")
        var plain = variables
        plain.pausedUntil = nil
        #expect(plain.dictionary["paused_until"] == nil)
    }

    @Test("the HTML example shows the pause too, escaped")
    func html() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tpl-pause-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for file in ["subject.mustache", "body.txt.mustache"] {
            try FileManager.default.copyItem(atPath: MailTemplatesTests.configTemplates + "/zh-Hans/" + file, toPath: dir.path + "/" + file)
        }
        try FileManager.default.copyItem(atPath: MailTemplatesTests.configTemplates + "/body.html.mustache.example",
                                         toPath: dir.path + "/body.html.mustache")
        let mail = try MailTemplates(directory: dir.path).render(variables)
        #expect(mail.html?.contains("孙七 曾设置外出暂停至 2026-01-20，暂停结束后已连续 <strong>2</strong> 天") == true)
    }
}
