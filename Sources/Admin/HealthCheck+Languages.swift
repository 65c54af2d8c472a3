import Config
import Foundation
import Mail
import Store
import Values

extension HealthCheck.Part {
    /// `templates`: they load and render a sample subject (exit 78 if not); then `languages`,
    /// which languages they are in. The templates are kept for `languagesAsked`.
    static let templates = Self(lines: { context in
        let configuration = context.configuration
        do throws(ConfigurationError) {
            let loaded = try MailTemplates(directory: configuration.templateDirectory, defaultLanguage: configuration.defaultLanguage)
            context.templates = loaded
            let sample = loaded.render(TemplateVariables(
                userName: "张三", missDays: configuration.rule.thresholdDays,
                lastCheckInDate: CalendarDate(year: 2026, month: 1, day: 10)!,
                runDate: CalendarDate(year: 2026, month: 1, day: 13)!, appName: configuration.appName))
            return [Finding(subject: "templates", ok: true, detail: "subject: \(sample.subject)"),
                    Finding(subject: "languages", ok: true, detail: HealthCheck.languages(loaded))]
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
    /// The `languages` line: which languages have templates and where from, the default, and
    /// each kind a language writes in another (docs/languages.md).
    static func languages(_ templates: MailTemplates) -> String {
        let names = templates.languages.sorted { $0.identifier < $1.identifier }.map { language in
            language.identifier + (language == templates.defaultLanguage ? " (default)" : "")
                + (templates.folders.contains(language) ? " from TEMPLATE_DIR" : "")
        }
        var line = names.joined(separator: ", ")
        if !templates.fallbacks.isEmpty {
            line += "; falls back: " + templates.fallbacks.map(\.description).joined(separator: ", ")
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
