import Config
import Foundation
import Mail
import Store
import Texts
import Values

extension HealthCheck.Part {
    /// `templates`: they and the page's texts (`page.texts`) load, and the templates render a
    /// sample subject (exit 78 if not); then `languages`, which languages they are in. The
    /// templates are kept for `languagesAsked`.
    static let templates = Self(lines: { context in
        let configuration = context.configuration
        do throws(ConfigurationError) {
            let loaded = try MailTemplates(directory: configuration.templateDirectory, defaultLanguage: configuration.defaultLanguage)
            let page = try TextTable(file: TextTable.page, directory: configuration.templateDirectory, defaultLanguage: loaded.defaultLanguage)
            context.templates = loaded
            let sample = loaded.render(TemplateVariables(
                userName: "张三", missDays: configuration.rule.thresholdDays,
                lastCheckInDate: CalendarDate(year: 2026, month: 1, day: 10)!,
                runDate: CalendarDate(year: 2026, month: 1, day: 13)!, appName: configuration.appName))
            return [Finding(subject: "templates", ok: true, detail: "subject: \(sample.subject)"),
                    Finding(subject: "languages", ok: true, detail: HealthCheck.languages(loaded, page: page))]
        } catch {
            return [Finding(subject: "templates", ok: false, detail: error.description, failure: .configuration)]
        }
    })

    /// `languages asked for`: the languages the rows name, and which templates answer them —
    /// when the templates loaded.
    static let languagesAsked = Self(read: { db, context in
        guard let templates = context.templates else { return [] }
        return try HealthCheck.reading("languages asked for", failure: .failure) {
            [HealthCheck.languagesAsked(try LanguageUse.read(db), templates: templates)]
        }
    })
}

extension HealthCheck {
    /// The `languages` line: which languages have templates or the page's texts and where from,
    /// the default, and what a language writes in another (docs/languages.md): each kind of mail
    /// (`ru all_clear → zh-Hans`), the page of a language without `page.texts` (`ru page →
    /// zh-Hans`: its readers get the page in their browser's language, else the default's), and
    /// the page's texts a language's `page.texts` lacks (`ru page: footer, thanks → zh-Hans`).
    static func languages(_ templates: MailTemplates, page: TextTable) -> String {
        let names = templates.languages.union(page.languages).sorted { $0.identifier < $1.identifier }.map { language in
            language.identifier + (language == templates.defaultLanguage ? " (default)" : "")
                + (templates.folders.union(page.folders).contains(language) ? " from TEMPLATE_DIR" : "")
                + (templates.languages.contains(language) ? "" : " (the page only)")
        }
        var fallbacks = templates.fallbacks.map { ($0.language, $0.description) }
        for language in templates.languages.subtracting(page.languages) {
            fallbacks.append((language, "\(language) page → \(page.writtenIn(language))"))
        }
        var lacking: [LanguageTag: [LanguageTag: [String]]] = [:]
        for fallback in page.fallbacks { lacking[fallback.language, default: [:]][fallback.writtenIn, default: []].append(fallback.name) }
        for (language, byLanguage) in lacking {
            for (writtenIn, names) in byLanguage.sorted(by: { $0.key.identifier < $1.key.identifier }) {
                fallbacks.append((language, "\(language) page: \(names.joined(separator: ", ")) → \(writtenIn)"))
            }
        }
        var line = names.joined(separator: ", ")
        if !fallbacks.isEmpty {
            // By language, each language's mails first (in the order of the kinds), then its page.
            let sorted = fallbacks.enumerated().sorted { ($0.element.0.identifier, $0.offset) < ($1.element.0.identifier, $1.offset) }
            line += "; falls back: " + sorted.map(\.element.1).joined(separator: ", ")
        }
        return line
    }

    /// The `languages asked for` line (docs/languages.md) — pure: each language the rows name,
    /// how many users and contacts name it, and the language they are written to in where that is
    /// another — a warning when a text is not a tag or no templates answer it (the readers get
    /// the next language of their chain, never nothing).
    static func languagesAsked(_ named: [LanguageUse.Named], templates: MailTemplates) -> Finding {
        guard !named.isEmpty else {
            return Finding(subject: "languages asked for", ok: true,
                           detail: "none: every contact is written to in \(templates.defaultLanguage) (the default)")
        }
        var warning = false
        let parts = named.map { entry in
            let counts = [(entry.users, "user"), (entry.contacts, "contact")].filter { $0.0 > 0 }
                .map { "\($0.0) \($0.1)\($0.0 == 1 ? "" : "s")" }.joined(separator: ", ")
            let choice = templates.choose(contact: entry.text, user: nil)
            var part = "\(entry.text) (\(counts))"
            switch choice.fallback {
            case .notATag:
                warning = true
                part += " → \(choice.tag): not a language tag"
            case .notAvailable:
                warning = true
                part += " → \(choice.tag): no templates in it"
            case nil:
                if choice.tag.identifier != entry.text { part += " → \(choice.tag)" }
            }
            return part
        }
        return Finding(subject: "languages asked for", ok: true, warning: warning, detail: parts.joined(separator: "; "))
    }
}
