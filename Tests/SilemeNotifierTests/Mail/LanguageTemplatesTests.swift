import Foundation
import Testing
@testable import Config
@testable import Mail
import Rule
import Texts
import Values

/// The templates of each language (docs/languages.md): the shipped ones built in, an operator's
/// folder per language, the chain a missing kind falls back along, and the counts and dates each
/// language writes through Foundation.
@Suite("Mail templates by language")
struct LanguageTemplatesTests {
    static let shippedFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/templates")
    static func tag(_ text: String) -> LanguageTag { LanguageTag(text)! }
    static func day(_ text: String) -> CalendarDate { CalendarDate(parsing: text)! }

    static func variables(missDays: Int = 2) -> TemplateVariables {
        var variables = TemplateVariables(userName: "张三", missDays: missDays, lastCheckInDate: day("2026-01-10"),
                                          runDate: day("2026-01-13"), appName: "一键打卡")
        variables.alertDate = day("2026-01-13")
        variables.checkedInAt = "2026-01-14 08:05"
        variables.checkInDate = day("2026-01-14")
        variables.thresholdDays = 2
        variables.contactEmail = "son@example.co.uk"
        return variables
    }

    /// A template folder made for one test, removed by the caller.
    static func folder(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tpl-lang-\(UUID().uuidString)")
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    @Test("the built-in text of each language is the shipped folder's, file for file — the mails' and the page's (scripts/builtin-templates.py)")
    func builtInIsShipped() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.shippedFolder.path).filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: Self.shippedFolder.appendingPathComponent($0).path, isDirectory: &isFolder) && isFolder.boolValue
        }
        #expect(Set(folders) == Set(LanguageFolders.builtIn.keys.map(\.identifier)))
        #expect(Set(folders) == ["zh-Hans", "zh-Hant", "en"])
        for folder in folders {
            let url = Self.shippedFolder.appendingPathComponent(folder)
            let builtIn = try #require(LanguageFolders.builtIn[Self.tag(folder)]).files
            let files = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".mustache") || $0.hasSuffix(".texts") }
            #expect(Set(files) == Set(builtIn.keys) && files.contains("page.texts"), "\(folder)")
            for file in files {
                #expect(try String(contentsOf: url.appendingPathComponent(file), encoding: .utf8) == builtIn[file],
                        "\(folder)/\(file): run scripts/builtin-templates.py")
            }
        }
    }

    @Test("every shipped language has every kind of mail: nothing falls back without a folder")
    func shippedComplete() throws {
        let templates = try MailTemplates(directory: nil)
        #expect(templates.languages == [Self.tag("zh-Hans"), Self.tag("zh-Hant"), Self.tag("en")])
        #expect(templates.fallbacks.isEmpty)
        #expect(templates.defaultLanguage == Self.tag("zh-Hans") && templates.folders.isEmpty)
        // The shipped folder read as TEMPLATE_DIR gives the same mails as the built-in text.
        let fromFiles = try MailTemplates(directory: Self.shippedFolder.path)
        #expect(fromFiles.folders == templates.languages)
        for language in templates.languages {
            for kind in DeliveryJob.Kind.mailed {
                #expect(fromFiles.render(Self.variables(), kind: kind, language: language)
                        == templates.render(Self.variables(), kind: kind, language: language), "\(language) \(kind)")
            }
        }
    }

    @Test("three contacts, three languages: English, traditional Chinese, and the default for the one who names none")
    func threeContacts() throws {
        let templates = try MailTemplates(directory: nil)
        let english = templates.render(Self.variables(), kind: .alert, language: templates.choose(contact: "en", user: nil).tag)
        #expect(english.subject == "[一键打卡] About 张三's check-ins")
        #expect(english.text.contains("has not checked in for 2 days in a row (last check-in: January 10, 2026)"), "\(english.text)")
        let traditional = templates.choose(contact: "zh-Hant-TW", user: nil)
        #expect(traditional.tag == Self.tag("zh-Hant") && traditional.fallback == nil)
        let hant = templates.render(Self.variables(), kind: .alert, language: traditional.tag)
        #expect(hant.subject == "[一键打卡] 關於 张三 的簽到提醒")
        #expect(hant.text.contains("已連續 2 天未在「一键打卡」應用程式中簽到（最後一次簽到：2026年1月10日）"), "\(hant.text)")
        let none = templates.choose(contact: nil, user: nil)
        #expect(none.tag == Self.tag("zh-Hans") && none.requested == nil && none.fallback == nil)
        #expect(templates.render(Self.variables(), kind: .alert, language: none.tag) == templates.render(Self.variables()),
                "the default is today's Chinese text")
        // The all-clear of each, in each one's language.
        #expect(templates.render(Self.variables(), kind: .allClear, language: Self.tag("en")).text
                .contains("On January 13, 2026 we told you that they had not checked in for 2 days."))
        #expect(templates.render(Self.variables(), kind: .allClear, language: Self.tag("zh-Hant")).text
                .contains("我們在 2026年1月13日 曾告知您 TA 已連續 2 天未簽到"))
        #expect(templates.render(Self.variables(), kind: .allClear).text.contains("我们在 2026-01-13 曾告知您 TA 已连续 2 天未签到"))
    }

    @Test("an English count is singular for one day and plural otherwise; the threshold too")
    func englishCounts() throws {
        let templates = try MailTemplates(directory: nil)
        let one = templates.render(Self.variables(missDays: 1), kind: .alert, language: Self.tag("en")).text
        #expect(one.contains("for 1 day in a row") && !one.contains("1 days"))
        #expect(templates.render(Self.variables(), kind: .introduction, language: Self.tag("en")).text.contains("If they miss 2 days in a row"))
    }

    @Test("an operator's folder for Russian: its alert written with CLDR's plural forms; the kinds it lacks fall back to the default, and are listed")
    func operatorLanguage() throws {
        let root = try Self.folder([
            "ru/subject.mustache": "[{{app_name}}] {{user_name}}\n",
            "ru/body.txt.mustache": "{{user_name}} не отмечается {{miss_days_text}} (с {{last_check_in_date_text}}).\n",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let templates = try MailTemplates(directory: root.path)
        #expect(templates.folders == [Self.tag("ru")] && templates.languages.contains(Self.tag("ru")))
        let choice = templates.choose(contact: nil, user: "ru-RU")
        #expect(choice.tag == Self.tag("ru") && choice.requested == "ru-RU" && choice.fallback == nil)
        for (days, words) in [(1, "1 день"), (2, "2 дня"), (5, "5 дней"), (11, "11 дней"), (21, "21 день")] {
            let text = templates.render(Self.variables(missDays: days), kind: .alert, language: Self.tag("ru")).text
            #expect(text.hasPrefix("张三 не отмечается \(words) (с 10 января 2026"), "\(text)")
        }
        let lacking = DeliveryJob.Kind.mailed.filter { $0 != .alert }
        #expect(templates.fallbacks == lacking.map { MailTemplates.Fallback(language: Self.tag("ru"), kind: $0, writtenIn: Self.tag("zh-Hans")) })
        #expect(templates.writtenIn(Self.tag("ru"), kind: .allClear) == Self.tag("zh-Hans"))
        #expect(templates.render(Self.variables(), kind: .allClear, language: Self.tag("ru")) == templates.render(Self.variables(), kind: .allClear))
    }

    @Test("a language without templates, or a text that is not a tag, falls back to the next one asked for, and says why")
    func fallbacks() throws {
        let templates = try MailTemplates(directory: nil)
        let unknown = templates.choose(contact: "klingon!", user: "zh-Hant")
        #expect(unknown.tag == Self.tag("zh-Hant") && unknown.fallback == .notATag("klingon!"))
        let french = templates.choose(contact: "fr-CA", user: nil)
        #expect(french.tag == Self.tag("zh-Hans") && french.fallback == .notAvailable(Self.tag("fr-CA")))
    }

    @Test("DEFAULT_LANGUAGE: a contact who names none is written to in it; the top of an older folder is its templates")
    func defaultLanguage() throws {
        let english = try MailTemplates(directory: nil, defaultLanguage: Self.tag("en"))
        #expect(english.choose(contact: nil, user: nil).tag == Self.tag("en"))
        #expect(english.render(Self.variables()).subject == "[一键打卡] About 张三's check-ins")
        #expect { try MailTemplates(directory: nil, defaultLanguage: Self.tag("fr")) } throws: {
            ($0 as? ConfigurationError)?.setting == "DEFAULT_LANGUAGE" && ($0 as? ConfigurationError)?.reason.contains("en, zh-Hans, zh-Hant") == true
        }
        // The layout before languages: the files at the top are the default language's.
        let root = try Self.folder(["subject.mustache": "Top {{user_name}}\n", "body.txt.mustache": "top\n"])
        defer { try? FileManager.default.removeItem(at: root) }
        let top = try MailTemplates(directory: root.path)
        #expect(top.render(Self.variables()).subject == "Top 张三" && top.folders == [Self.tag("zh-Hans")])
        #expect(top.render(Self.variables(), language: Self.tag("en")).subject == "[一键打卡] About 张三's check-ins")
        let french = try MailTemplates(directory: root.path, defaultLanguage: Self.tag("fr"))
        #expect(french.render(Self.variables()).subject == "Top 张三" && french.folders == [Self.tag("fr")])
    }

    @Test("TEMPLATE_DIR pointed at a language's folder (…/templates/en, as an English service did before languages) keeps writing that language")
    func folderNamedByLanguage() throws {
        let english = Self.shippedFolder.appendingPathComponent("en").path
        let templates = try MailTemplates(directory: english)
        #expect(templates.defaultLanguage == Self.tag("en") && templates.folders == [Self.tag("en")])
        #expect(templates.render(Self.variables(missDays: 3), kind: .followUp).text.contains("not checked in for 3 days in a row"))
        // DEFAULT_LANGUAGE set: the folder's files are still English, for the contacts who read it.
        let chinese = try MailTemplates(directory: english, defaultLanguage: Self.tag("zh-Hans"))
        #expect(chinese.render(Self.variables()) == (try MailTemplates(directory: nil)).render(Self.variables()))
        #expect(chinese.render(Self.variables(), language: chinese.choose(contact: "en", user: nil).tag).subject == "[一键打卡] About 张三's check-ins")
    }

    @Test("a folder that cannot be read right is refused, naming TEMPLATE_DIR", arguments: [
        ["subject.mustache": "a\n", "body.txt.mustache": "b\n", "zh-Hans/subject.mustache": "c\n", "zh-Hans/body.txt.mustache": "d\n"],
        ["zh-hant/subject.mustache": "a\n", "zh-hant/body.txt.mustache": "b\n"],
        ["en/subject.mustache": "a\n"],
        ["en/all_clear.body.txt.mustache": "b\n"],
        ["en/subject.mustache": "{{#user_name}}\n", "en/body.txt.mustache": "b\n"],
        ["notes/readme.txt": "x\n"],
    ])
    func refused(files: [String: String]) throws {
        let root = try Self.folder(files)
        defer { try? FileManager.default.removeItem(at: root) }
        #expect { try MailTemplates(directory: root.path) } throws: { ($0 as? ConfigurationError)?.setting == "TEMPLATE_DIR" }
    }

    @Test("a composer writes each job in its contact's language, else the user's")
    func composer() throws {
        let configuration = try ConfigurationLoader(environment: ["FROM_EMAIL": "noreply@sileme.app"], filePath: nil).load()
        let composer = try MailComposer(configuration.mail, templates: MailTemplates(directory: nil))
        var job = DeliveryJob(userID: "00000000-0000-4000-8000-000000000001", name: try DisplayName(cleaning: "张三"),
                              email: try EmailAddress(validating: "son@example.co.uk"), missedDays: 2, lastCheckIn: Self.day("2026-01-10"))
        job.languages = .init(contact: "en-GB", user: "zh-Hant")
        #expect(composer.language(of: job).tag == Self.tag("en"))
        let english = composer.message(for: job, runDate: Self.day("2026-01-13"), messageID: "m@sileme.app")
        #expect(english.textBody.contains("for 2 days in a row") && english.subject == "[一键打卡] About 张三's check-ins")
        job.languages = .init(contact: nil, user: "zh-Hant")
        let hant = composer.message(for: job, runDate: Self.day("2026-01-13"), messageID: "m@sileme.app")
        #expect(hant.subject == "[一键打卡] 關於 张三 的簽到提醒")
        #expect(composer.message(for: job.onWebhook(contacts: []), runDate: Self.day("2026-01-13"), messageID: "m@sileme.app").subject
                == hant.subject, "the webhook twin keeps the languages")
    }
}
