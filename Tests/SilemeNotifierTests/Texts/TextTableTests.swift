@testable import Admin
import Config
import Foundation
import Mail
import Testing
@testable import Texts
import Values

/// A table of texts per language (`page.texts`, docs/languages.md): the shipped languages built in
/// and complete, an operator's folder over them text by text, the chain a missing text falls back
/// along, counts and dates worded for the text's language, and the mistakes refused at start.
@Suite("Texts per language: the page's table")
struct TextTableTests {
    static func tag(_ text: String) -> LanguageTag { LanguageTag(text)! }
    static let file = TextTable.page

    static func table(_ files: [String: String], top: String = "", defaultLanguage: String = "zh-Hans") throws -> TextTable {
        let root = try LanguageTemplatesTests.folder(files).appendingPathComponent(top)
        defer { try? FileManager.default.removeItem(at: root) }
        return try TextTable(file: file, directory: root.path, defaultLanguage: tag(defaultLanguage))
    }

    @Test("the shipped languages have every text: nothing falls back, and each names the same texts")
    func shipped() throws {
        let table = try TextTable(file: Self.file, directory: nil, defaultLanguage: .serviceDefault)
        #expect(table.languages == [Self.tag("zh-Hans"), Self.tag("zh-Hant"), Self.tag("en")] && table.folders.isEmpty)
        #expect(table.fallbacks.isEmpty && table.names.count > 20)
        for language in table.languages {
            let names = try TextTable.parse(LanguageFolders.builtIn[language]!.files[Self.file]!, name: "\(language)").map(\.name)
            #expect(names == table.names, "\(language) names the texts in the same order")
        }
        #expect(table.render("heading", in: Self.tag("en"), ["user_name": .text("Ann"), "miss_days": .days(1)]) == "Ann has not checked in for 1 day")
        #expect(table.render("heading", in: Self.tag("zh-Hant"), ["user_name": .text("張三"), "miss_days": .days(3)]) == "張三 已連續 3 天未簽到")
    }

    @Test("an operator's ru/page.texts: its texts in Russian with CLDR's plural forms; the texts it lacks from the default's chain, and listed")
    func russian() throws {
        let table = try Self.table(["ru/page.texts": """
            # Russian, half done
            heading = {{user_name}} не отмечается {{miss_days_text}}
            going = Я еду
            """])
        #expect(table.languages.contains(Self.tag("ru")) && table.folders == [Self.tag("ru")])
        for (days, words) in [(1, "1 день"), (2, "2 дня"), (5, "5 дней")] {
            #expect(table.render("heading", in: Self.tag("ru"), ["user_name": .text("Аня"), "miss_days": .days(days)]) == "Аня не отмечается \(words)")
        }
        #expect(table.render("going", in: Self.tag("ru")) == "Я еду")
        #expect(table.render("send", in: Self.tag("ru")) == "发送", "a text the file lacks: the default's")
        let lacking = table.names.filter { $0 != "heading" && $0 != "going" }
        #expect(table.fallbacks == lacking.map { TextTable.Fallback(language: Self.tag("ru"), name: $0, writtenIn: Self.tag("zh-Hans")) })
        // With DEFAULT_LANGUAGE=en, what ru lacks is English.
        let english = try Self.table(["ru/page.texts": "going = Я еду\n"], defaultLanguage: "en")
        #expect(english.render("send", in: Self.tag("ru")) == "Send" && english.fallbacks.allSatisfy { $0.writtenIn == Self.tag("en") })
        // A count in a fallen-back text is worded for the language the text is written in.
        let worded = try Self.table(["ru/page.texts": "going = Я еду\n", "en/page.texts": "heading = {{miss_days_text}}!\n"], defaultLanguage: "en")
        #expect(worded.render("heading", in: Self.tag("ru"), ["miss_days": .days(2)]) == "2 days!")
    }

    @Test("a folder of a shipped language changes the texts it names; the others stay the built-in ones of that language")
    func override() throws {
        let table = try Self.table(["en/page.texts": "going = I'll go\n"])
        #expect(table.render("going", in: Self.tag("en")) == "I'll go" && table.render("send", in: Self.tag("en")) == "Send")
        #expect(table.fallbacks.isEmpty && table.folders == [Self.tag("en")])
        // The texts at the top of a folder named by a language are that language's.
        let top = try Self.table(["ru/page.texts": "going = Я еду\n"], top: "ru")
        #expect(top.render("going", in: Self.tag("ru")) == "Я еду")
    }

    @Test("refused at start, naming the file and the line: an unknown name, a name twice, a line without =, a broken template",
          arguments: [("thank = x\n", "line 1: no text is named thank"), ("going = a\n# c\ngoing = b\n", "line 3: going is given twice"),
                      ("going\n", "line 1: not name = text"), ("going = {{#x}}\n", "line 1 is not a valid Mustache template"),
                      ("my text = x\n", "line 1: \"my text\" is not a text's name")])
    func refused(_ source: String, _ reason: String) throws {
        #expect {
            try Self.table(["ru/page.texts": source])
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.setting == "TEMPLATE_DIR" && error?.reason.contains("ru/page.texts") == true && error?.reason.contains(reason) == true
        }
    }

    @Test("a folder with only the page's texts is a language of the page, not of the mails: the directory is not refused as empty")
    func pageOnly() throws {
        let root = try LanguageTemplatesTests.folder(["ru/page.texts": "going = Я еду\n"])
        defer { try? FileManager.default.removeItem(at: root) }
        let table = try TextTable(file: Self.file, directory: root.path, defaultLanguage: .serviceDefault)
        #expect(table.languages.contains(Self.tag("ru")))
        let mails = try MailTemplates(directory: root.path)
        #expect(!mails.languages.contains(Self.tag("ru")) && mails.folders.isEmpty)
        #expect(table.render("going", in: Self.tag("fr")) == "我去看看", "a language without the file: the default's")
    }

    @Test("check's languages line: a folder without page.texts says its page falls back, as a kind of mail does; a partial one lists the texts it lacks")
    func checkLine() throws {
        let root = try LanguageTemplatesTests.folder([
            "ru/subject.mustache": "{{user_name}}\n", "ru/body.txt.mustache": "{{user_name}}\n",
            "uk/page.texts": "going = Я їду\nsend = Надіслати\n" + Self.allBut(["going", "send", "footer", "thanks"], from: "en"),
            "pt/subject.mustache": "{{user_name}}\n", "pt/body.txt.mustache": "{{user_name}}\n", "pt/page.texts": Self.allBut([], from: "en"),
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let mails = try MailTemplates(directory: root.path)
        let page = try TextTable(file: Self.file, directory: root.path, defaultLanguage: mails.defaultLanguage)
        let line = HealthCheck.languages(mails, page: page)
        #expect(line.hasPrefix("en, pt from TEMPLATE_DIR, ru from TEMPLATE_DIR, uk from TEMPLATE_DIR (the page only), zh-Hans (default), zh-Hant; "
                               + "falls back: pt all_clear → zh-Hans, "), "\(line)")
        #expect(line.contains(", ru outcome_unreachable → zh-Hans, ru page → zh-Hans, uk page: thanks, footer → zh-Hans"), "\(line)")
        #expect(!line.contains("pt page"), "a complete page.texts falls back in nothing")
    }

    /// The lines of a shipped language's `page.texts` but those named in `names`.
    static func allBut(_ names: Set<String>, from language: String) -> String {
        LanguageFolders.builtIn[tag(language)]!.files[file]!.split(separator: "\n")
            .filter { line in !names.contains { line.hasPrefix("\($0) =") } }.joined(separator: "\n") + "\n"
    }
}
