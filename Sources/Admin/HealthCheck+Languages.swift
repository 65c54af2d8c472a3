import Foundation
import Mail
import Store
import Values

extension HealthCheck {
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
