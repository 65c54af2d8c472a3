import Config
import Foundation
import Mustache
import Rule
import Values

extension MailTemplates {
    /// The templates of `TEMPLATE_DIR`, by language: each folder named by a language tag, and the
    /// files at its top as `topLanguage`'s. Other folders (a backup, `webhooks/`) are not
    /// templates and are left alone. A folder named by a tag in another spelling (`zh_TW`,
    /// `zh-hant`) is refused rather than guessed at, and so are templates both at the top and in
    /// the default language's folder: one of them would silently not be used.
    static func folders(_ directory: String, topLanguage: LanguageTag) throws(ConfigurationError) -> [LanguageTag: [DeliveryJob.Kind: Set]] {
        let top = try sets(named: directory) { (file) throws(ConfigurationError) in try read(directory, file) }
        var found: [LanguageTag: [DeliveryJob.Kind: Set]] = top.isEmpty ? [:] : [topLanguage: top]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() {
            let path = (directory as NSString).appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue,
                  let tag = LanguageTag(name) else { continue }
            guard tag.identifier == name else {
                throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "the folder \(path) names a language as \(tag) does: rename it \(tag)")
            }
            if tag == topLanguage, !top.isEmpty {
                throw ConfigurationError(setting: "TEMPLATE_DIR",
                                         reason: "\(tag) templates both at the top of \(directory) and in \(name)/: keep one")
            }
            let sets = try sets(named: path) { (file) throws(ConfigurationError) in try read(path, file) }
            if !sets.isEmpty { found[tag] = sets }
        }
        guard !found.isEmpty else {
            throw ConfigurationError(setting: "TEMPLATE_DIR",
                                     reason: "\(directory) has no templates: neither subject.mustache and body.txt.mustache nor a language folder (en/, zh-Hant/…)")
        }
        return found
    }

    /// The sets of one language whose files `read` gives by name (nil: no such file): a kind is
    /// there when its subject or its text is, and then both must be.
    static func sets(named name: String, read: (String) throws(ConfigurationError) -> String?) throws(ConfigurationError) -> [DeliveryJob.Kind: Set] {
        var sets: [DeliveryJob.Kind: Set] = [:]
        for kind in DeliveryJob.Kind.mailed {
            let subjectFile = fileName("subject.mustache", kind: kind), textFile = fileName("body.txt.mustache", kind: kind)
            let htmlFile = fileName("body.html.mustache", kind: kind)
            let subject = try read(subjectFile), text = try read(textFile)
            guard subject != nil || text != nil else { continue }
            guard let subject, let text else {
                throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(name): \(subject == nil ? subjectFile : textFile) is missing")
            }
            let html = try read(htmlFile)
            func compile(_ source: String, _ file: String) throws(ConfigurationError) -> MustacheTemplate {
                try MailTemplates.compile(source, name: (name as NSString).appendingPathComponent(file))
            }
            sets[kind] = Set(subject: try compile(subject, subjectFile), text: try compile(text, textFile),
                             html: try html.map { (source) throws(ConfigurationError) in try compile(source, htmlFile) },
                             usesWording: [subject, text, html ?? ""].contains { $0.contains("_text") })
        }
        return sets
    }

    /// The language of the files at the top of `directory`: the one its own name is (`…/templates/en`,
    /// as an English service pointed TEMPLATE_DIR before languages), else `defaultLanguage`.
    static func topLanguage(of directory: String, defaultLanguage: LanguageTag) -> LanguageTag {
        let name = (directory as NSString).lastPathComponent
        return LanguageTag(name).flatMap { $0.identifier == name ? $0 : nil } ?? defaultLanguage
    }

    /// The file `name` of `folder`, nil when there is none.
    private static func read(_ folder: String, _ name: String) throws(ConfigurationError) -> String? {
        let path = (folder as NSString).appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let content = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "cannot read \(path) as UTF-8")
        }
        return content
    }

    /// Compiles a template without Mustache's escaping (values of the HTML body are escaped by
    /// `render` beforehand).
    static func compile(_ source: String, name: String) throws(ConfigurationError) -> MustacheTemplate {
        do {
            return try MustacheTemplate(string: "{{% CONTENT_TYPE: TEXT}}" + source)
        } catch {
            throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(name) is not a valid Mustache template: \(error)")
        }
    }
}
