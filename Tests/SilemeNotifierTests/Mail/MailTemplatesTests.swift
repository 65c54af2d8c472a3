import Foundation
import Testing
@testable import Values
@testable import Config
@testable import Mail

@Suite("MailTemplates")
struct MailTemplatesTests {
    static let configTemplates = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/templates").path

    let variables = TemplateVariables(userName: "张三 <b>&", missDays: 3, lastCheckInDate: CalendarDate(parsing: "2026-01-10")!,
                                      runDate: CalendarDate(parsing: "2026-01-14")!, appName: "一键打卡")

    @Test("the built-in default is the design doc's text with the real number of days")
    func builtIn() throws {
        let mail = try MailTemplates(directory: nil).render(variables)
        #expect(mail.subject == "[一键打卡] 关于 张三 <b>& 的签到提醒")
        #expect(mail.text == """
            您好，

            您是 张三 <b>& 设置的紧急联系人。

            张三 <b>& 已连续 3 天未在"一键打卡"应用中签到。

            这是一封自动提醒邮件，请您在方便时确认 TA 的状态。

            此致
            一键打卡团队

            """)
        #expect(mail.html == nil)
    }

    @Test("the shipped files in config/templates render exactly like the built-in default")
    func shippedFilesMatch() throws {
        let fromFiles = try MailTemplates(directory: Self.configTemplates).render(variables)
        let builtIn = try MailTemplates(directory: nil).render(variables)
        #expect(fromFiles == builtIn)
    }

    @Test("an HTML body escapes values; every variable is available")
    func htmlAndVariables() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tpl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try "{{app_name}}: {{user_name}}\n\n".write(to: dir.appendingPathComponent("subject.mustache"), atomically: true, encoding: .utf8)
        try "{{user_name}} {{miss_days}} {{last_check_in_date}} {{run_date}}".write(to: dir.appendingPathComponent("body.txt.mustache"), atomically: true, encoding: .utf8)
        try "<p>{{user_name}}</p>".write(to: dir.appendingPathComponent("body.html.mustache"), atomically: true, encoding: .utf8)
        let mail = try MailTemplates(directory: dir.path).render(variables)
        #expect(mail.subject == "一键打卡: 张三 <b>&")
        #expect(mail.text == "张三 <b>& 3 2026-01-10 2026-01-14")
        #expect(mail.html == "<p>张三 &lt;b&gt;&amp;</p>")
    }

    @Test("a missing or broken template is a configuration error naming TEMPLATE_DIR")
    func broken() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tpl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        #expect { try MailTemplates(directory: dir.path) } throws: { ($0 as? ConfigurationError)?.setting == "TEMPLATE_DIR" }
        try "{{#user_name}}".write(to: dir.appendingPathComponent("subject.mustache"), atomically: true, encoding: .utf8)
        try "x".write(to: dir.appendingPathComponent("body.txt.mustache"), atomically: true, encoding: .utf8)
        #expect { try MailTemplates(directory: dir.path) } throws: { ($0 as? ConfigurationError)?.reason.contains("subject.mustache") == true }
    }
}
