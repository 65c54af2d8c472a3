import Config
import Foundation
import Mustache
import Values

/// The texts of one table file (`page.texts`: the acknowledgement page's words) in every
/// language, with the same chain as the mail templates (docs/languages.md): each text from the
/// language's folder of `TEMPLATE_DIR`, else from that language's built-in file, else from the
/// next language of the chain — the tag shortened (`zh-Hant-TW` → `zh-Hant` → `zh`), then the
/// service's default language, then the built-in `zh-Hans`, which has every text. `fallbacks`
/// lists each text a language takes from another, for `check`.
///
/// The file is a list a translator edits: one text a line, `name = text`; blank lines and lines
/// that start with `#` are comments. The text is a Mustache template (the variables its consumer
/// passes); it runs to the end of its line, without the white space around it. A name the shipped
/// `zh-Hans` file does not have, a name given twice, or a line without `=` is refused at start.
package struct TextTable: Sendable {
    /// A text a language takes from another (`check` lists them).
    package struct Fallback: Sendable, Equatable, CustomStringConvertible {
        /// The language whose file lacks the text.
        package let language: LanguageTag
        /// The text's name.
        package let name: String
        /// The language it is written in instead.
        package let writtenIn: LanguageTag

        package var description: String { "\(language) \(name) → \(writtenIn)" }
    }

    /// A value a text shows: a text as it is, or a count of days or a date, which a text names
    /// as it is (`{{miss_days}}` 3, `{{alert_date}}` 2026-01-13) or written for the text's
    /// language by Foundation as its `_text` twin (`{{miss_days_text}}` "3 days", "3天"; `{{alert_date_text}}`
    /// "January 13, 2026"), as in the mail templates.
    package enum Value: Sendable {
        case text(String)
        case days(Int)
        case date(CalendarDate)
    }

    /// One text as a language gets it: the template, the language it is written in, and whether
    /// it names a `_text` twin (only then is a count or a date worded for it).
    private struct Entry: Sendable {
        let template: MustacheTemplate
        let language: LanguageTag
        let usesWording: Bool
    }

    /// The acknowledgement page's table (`AckPage`'s `AckText` names its texts).
    package static let page = "page.texts"

    /// The file's name in each language folder (`page.texts`).
    package let file: String
    /// The service's default language (`DEFAULT_LANGUAGE` as the mail templates settled it).
    package let defaultLanguage: LanguageTag
    /// The languages with the file: built in, or in a folder of `TEMPLATE_DIR`.
    package let languages: Set<LanguageTag>
    /// The languages with the file in a folder of `TEMPLATE_DIR`.
    package let folders: Set<LanguageTag>
    /// Each text a language takes from another, by language, in the order of the file.
    package let fallbacks: [Fallback]
    /// The texts' names, as the last resort's file lists them.
    package let names: [String]
    private let resolved: [LanguageTag: [String: Entry]]

    /// The shipped language every chain ends in: its built-in file has every text.
    static let lastResort = LanguageTag.serviceDefault

    /// Loads `file` from the built-in languages and the folders of `directory` (`TEMPLATE_DIR`;
    /// nil: the built-in texts only), for a service whose default language is `defaultLanguage`.
    /// A broken file is a configuration error of `TEMPLATE_DIR`.
    package init(file: String, directory: String?, defaultLanguage: LanguageTag) throws(ConfigurationError) {
        let folders = try directory.map { (directory) throws(ConfigurationError) in
            try LanguageFolders.read(directory, topLanguage: LanguageFolders.topLanguage(of: directory, defaultLanguage: defaultLanguage))
        } ?? [:]
        try self.init(file: file, folders: folders, defaultLanguage: defaultLanguage)
    }

    /// Loads `file` from the built-in languages and `folders` (`TEMPLATE_DIR`'s, as `LanguageFolders.read` gives them).
    package init(file: String, folders: [LanguageTag: LanguageFolders.Folder], defaultLanguage: LanguageTag) throws(ConfigurationError) {
        guard let last = LanguageFolders.builtIn[Self.lastResort]?.files[file] else {
            preconditionFailure("the built-in \(Self.lastResort) texts have no \(file)")
        }
        let names = try Self.parse(last, name: "built-in \(Self.lastResort)/\(file)").map(\.name)
        let known = Set(names)
        var own: [LanguageTag: [String: MustacheTemplate]] = [:]
        var sources: [LanguageTag: [String: String]] = [:]
        for tag in Set(LanguageFolders.builtIn.keys).union(folders.keys).sorted(by: { $0.identifier < $1.identifier }) {
            // A folder's texts over the built-in ones of its language, text by text.
            for folder in [LanguageFolders.builtIn[tag], folders[tag]].compactMap({ $0 }) {
                guard let source = folder.files[file] else { continue }
                for line in try Self.parse(source, name: folder.path(file)) {
                    let place = "\(folder.path(file)), line \(line.number)"
                    guard known.contains(line.name) else {
                        throw ConfigurationError(setting: "TEMPLATE_DIR",
                                                 reason: "\(place): no text is named \(line.name) (the names are those of config/templates/en/\(file))")
                    }
                    own[tag, default: [:]][line.name] = try LanguageFolders.compile(line.text, name: place)
                    sources[tag, default: [:]][line.name] = line.text
                }
            }
        }
        self.file = file
        self.defaultLanguage = defaultLanguage
        self.names = names
        languages = Set(own.keys)
        self.folders = Set(folders.keys.filter { folders[$0]?.files[file] != nil })
        var resolved: [LanguageTag: [String: Entry]] = [:]
        var fallbacks: [Fallback] = []
        for language in own.keys {
            let chain = language.lookups + defaultLanguage.lookups + [Self.lastResort]
            for name in names {
                guard let from = chain.first(where: { own[$0]?[name] != nil }) else { continue }  // the last resort has it
                resolved[language, default: [:]][name] = Entry(template: own[from]![name]!, language: from,
                                                               usesWording: sources[from]![name]!.contains("_text"))
                if from != language { fallbacks.append(Fallback(language: language, name: name, writtenIn: from)) }
            }
        }
        self.resolved = resolved
        let order = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
        self.fallbacks = fallbacks.sorted { ($0.language.identifier, order[$0.name]!) < ($1.language.identifier, order[$1.name]!) }
    }

    /// The language of `languages` a tag finds through its lookups (`zh-Hant-TW` → `zh-Hant`,
    /// `zh` → `zh-Hans`), or nil: not a tag, or no language with the file answers it.
    package func matching(_ text: String?) -> LanguageTag? {
        guard let text, let tag = LanguageTag(text) else { return nil }
        return tag.lookups.first(where: languages.contains)
    }

    /// The language a reader of `language` gets the file in where `language` has none: the
    /// first of its chain that has it (the tag shortened, the default, `zh-Hans`).
    package func writtenIn(_ language: LanguageTag) -> LanguageTag {
        (language.lookups + defaultLanguage.lookups).first(where: languages.contains) ?? Self.lastResort
    }

    /// The text `name` (one of `names`) in `language` (one of `languages`; another: the default's)
    /// with `values`: each count and date also as its `_text` twin, written for the language the
    /// text is written in. Rendered without escaping: the caller escapes for where it goes.
    package func render(_ name: String, in language: LanguageTag, _ values: [String: Value] = [:]) -> String {
        guard let entry = (resolved[language] ?? resolved[writtenIn(defaultLanguage)])?[name] else {
            preconditionFailure("no text is named \(name) in \(file)")
        }
        var strings: [String: String] = [:]
        for (key, value) in values {
            switch value {
            case .text(let text):
                strings[key] = text
            case .days(let count):
                strings[key] = "\(count)"
                if entry.usesWording { strings[key + "_text"] = entry.language.days(count) }
            case .date(let date):
                strings[key] = "\(date)"
                if entry.usesWording { strings[key + "_text"] = entry.language.date(date) }
            }
        }
        return entry.template.render(strings)
    }

    /// One line of a table file: its number, the text's name and the text.
    struct Line: Equatable {
        let number: Int
        let name: String
        let text: String
    }

    /// The texts of a table file (`name` is the file as messages name it). Blank lines and lines
    /// that start with `#` are comments; every other line is `name = text`, the name of letters,
    /// digits and `_`, each name once.
    static func parse(_ source: String, name file: String) throws(ConfigurationError) -> [Line] {
        var lines: [Line] = []
        var seen: Set<String> = []
        for (index, raw) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(file), line \(index + 1): not name = text")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }) else {
                throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(file), line \(index + 1): \"\(name)\" is not a text's name")
            }
            guard seen.insert(name).inserted else {
                throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(file), line \(index + 1): \(name) is given twice")
            }
            lines.append(Line(number: index + 1, name: name, text: line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)))
        }
        return lines
    }
}
