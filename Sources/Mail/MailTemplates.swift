import Config
import Foundation
import Mustache
import Output
import Rule
import Texts
import Values

/// The mail templates (Mustache) of every language the service writes in, one set per kind of
/// message: for the alert `subject.mustache`, `body.txt.mustache` and an optional
/// `body.html.mustache`; for the other kinds the same names prefixed with the kind
/// (`all_clear.subject.mustache`, `follow_up.body.txt.mustache`…).
///
/// Where they come from, for each language and kind (docs/languages.md; the folders are
/// `LanguageFolders`', which the page's texts share):
/// - `TEMPLATE_DIR/<tag>/` (`en/`, `zh-Hant/`, `ru/`): an operator's folder for that language;
///   files at the top of `TEMPLATE_DIR` (the layout before languages) are `DEFAULT_LANGUAGE`'s;
/// - else the shipped text built into the daemon (`zh-Hans`, `zh-Hant`, `en`: the files of
///   `config/templates/<tag>/`);
/// - else the next language of the chain: the tag shortened (`zh-Hant-TW` → `zh-Hant` → `zh`),
///   then `DEFAULT_LANGUAGE`, then the built-in `zh-Hans`, which has every kind. `fallbacks`
///   lists each kind a language writes in another, for `check`.
///
/// Variables: `user_name`, `miss_days`, `last_check_in_date`, `run_date`, `app_name`, and
/// `paused_until` (set only in a mail after a pause: use it as a section); for an all-clear also
/// `checked_in_at` (date and time in the service zone) and `check_in_date`; for an all-clear and
/// a follow-up `alert_date`; for an introduction `contact_email` and `threshold_days`; for an alert
/// and a follow-up `ack_url` (set only with `ACK_BASE_URL`: use it as a section); for an
/// `acknowledged` notice `alert_date`, `acknowledged_by` (masked) and `acknowledged_at`; for an
/// `escalation` `alert_date` and `ack_url`; for the outcome notices (`outcome_ok`,
/// `outcome_unreachable`) `alert_date`, `outcome_by` (masked) and `outcome_at`, and in
/// `outcome_unreachable` `ack_url`. Each count and date has a `_text` twin written for the
/// template's language by Foundation (`miss_days_text`: "2 days", "2 дня"; `alert_date_text`:
/// "January 13, 2026", "2026年1月13日"). The subject and the text body are rendered without
/// escaping; the HTML body escapes every value (see `render`).
package struct MailTemplates: Sendable {
    /// The three templates of one kind in one language.
    struct Set: Sendable {
        let subject: MustacheTemplate
        let text: MustacheTemplate
        let html: MustacheTemplate?
        /// Whether a template names a `_text` variable: only then are the language's words
        /// (counts, dates) formatted for a mail.
        let usesWording: Bool
    }

    /// One kind's templates as a language gets them: the set, and the language it is written in.
    private struct Resolved: Sendable {
        let set: Set
        let language: LanguageTag
    }

    /// A kind that a language writes in another (`check` lists them).
    package struct Fallback: Sendable, Equatable, CustomStringConvertible {
        /// The language whose templates lack the kind.
        package let language: LanguageTag
        /// The kind.
        package let kind: DeliveryJob.Kind
        /// The language the kind is written in instead.
        package let writtenIn: LanguageTag

        package var description: String { "\(language) \(kind.rawValue) → \(writtenIn)" }
    }

    /// `DEFAULT_LANGUAGE`: one of `languages`.
    package let defaultLanguage: LanguageTag
    /// The languages with templates: built in, or a folder of `TEMPLATE_DIR`.
    package let languages: Swift.Set<LanguageTag>
    /// The languages with a folder of their own in `TEMPLATE_DIR` (the default's, for files at its top).
    package let folders: Swift.Set<LanguageTag>
    /// Each kind a language writes in another, by language and kind.
    package let fallbacks: [Fallback]
    private let resolved: [LanguageTag: [DeliveryJob.Kind: Resolved]]

    /// The shipped language every chain ends in: its built-in templates have every kind.
    static let lastResort = LanguageTag.serviceDefault

    /// Loads the templates of `directory` (nil: the built-in ones only). `defaultLanguage` is
    /// `DEFAULT_LANGUAGE` (nil: not set): unset, it is the language of the templates at the top of
    /// a folder named by one (`TEMPLATE_DIR=…/templates/en` keeps writing English, as before
    /// languages), else `zh-Hans`. A broken folder or a default with no templates is a
    /// configuration error.
    package init(directory: String?, defaultLanguage setting: LanguageTag? = nil) throws(ConfigurationError) {
        var defaultLanguage = setting ?? .serviceDefault
        var own: [LanguageTag: [DeliveryJob.Kind: Set]] = [:]
        for (tag, folder) in LanguageFolders.builtIn {
            own[tag] = try Self.sets(folder)
        }
        guard own[Self.lastResort]?.count == DeliveryJob.Kind.mailed.count else {
            preconditionFailure("the built-in \(Self.lastResort) templates lack a kind")
        }
        var folders: Swift.Set<LanguageTag> = []
        if let directory {
            let top = LanguageFolders.topLanguage(of: directory, defaultLanguage: defaultLanguage)
            var found: [LanguageTag: [DeliveryJob.Kind: Set]] = [:]
            for (tag, folder) in try LanguageFolders.read(directory, topLanguage: top).sorted(by: { $0.key.identifier < $1.key.identifier }) {
                let sets = try Self.sets(folder)
                if !sets.isEmpty { found[tag] = sets }
            }
            if setting == nil, found[top] != nil {
                defaultLanguage = top
            }
            for (tag, sets) in found {
                folders.insert(tag)
                own[tag, default: [:]].merge(sets) { $1 }
            }
        }
        guard own[defaultLanguage] != nil else {
            let known = own.keys.map(\.identifier).sorted().joined(separator: ", ")
            throw ConfigurationError(setting: "DEFAULT_LANGUAGE",
                                     reason: "no templates in \(defaultLanguage): add the folder \(defaultLanguage) to TEMPLATE_DIR, or choose one of \(known)")
        }
        self.defaultLanguage = defaultLanguage
        self.folders = folders
        languages = Swift.Set(own.keys)
        var resolved: [LanguageTag: [DeliveryJob.Kind: Resolved]] = [:]
        var fallbacks: [Fallback] = []
        for language in own.keys {
            let chain = language.lookups + defaultLanguage.lookups + [Self.lastResort]
            for kind in DeliveryJob.Kind.mailed {
                guard let from = chain.first(where: { own[$0]?[kind] != nil }) else { continue }  // the last resort has it
                resolved[language, default: [:]][kind] = Resolved(set: own[from]![kind]!, language: from)
                if from != language { fallbacks.append(Fallback(language: language, kind: kind, writtenIn: from)) }
            }
        }
        self.resolved = resolved
        self.fallbacks = fallbacks.sorted { ($0.language.identifier, $0.kind) < ($1.language.identifier, $1.kind) }
    }

    /// The language a recipient is written to in: the contact's, else the user's, else the
    /// default, each completed and shortened until one has templates (`LanguageTag.Choice`).
    package func choose(contact: String?, user: String?) -> LanguageTag.Choice {
        .choose(contact: contact, user: user, fallback: defaultLanguage, available: languages)
    }

    /// The language `kind` is written in for a reader of `language` (nil: the default).
    package func writtenIn(_ language: LanguageTag?, kind: DeliveryJob.Kind) -> LanguageTag {
        resolve(language, kind: kind).language
    }

    /// Renders the three parts of `kind` (one of `DeliveryJob.Kind.mailed`: a reminder is never
    /// mailed) in `language` (one of `languages`, as `choose` gives it; nil: the default) for
    /// `variables`. The subject comes back as one line (line breaks and runs of white space folded
    /// to single spaces).
    ///
    /// The HTML body gets every value HTML-escaped here, one Unicode scalar at a time, and its
    /// template is compiled without Mustache's own escaping: Mustache escapes by `Character`, so a
    /// `"` or `<` followed by a combining mark or a joiner (one grapheme cluster) went through
    /// unescaped and could end an attribute value. `{{{…}}}` is escaped as well.
    package func render(_ variables: TemplateVariables, kind: DeliveryJob.Kind = .alert, language: LanguageTag? = nil) -> RenderedMail {
        let found = resolve(language, kind: kind)
        let values = variables.dictionary(wordedIn: found.set.usesWording ? found.language : nil)
        let subjectLine = Self.singleLine(found.set.subject.render(values))
        return RenderedMail(subject: subjectLine, text: found.set.text.render(values),
                            html: found.set.html?.render(values.mapValues(Escaping.html)))
    }

    private func resolve(_ language: LanguageTag?, kind: DeliveryJob.Kind) -> Resolved {
        let language = language.flatMap { resolved[$0] != nil ? $0 : nil } ?? defaultLanguage
        return resolved[language]![kind]!
    }

    /// `text` on one line: each run of white space (any Unicode `White_Space` scalar: CR, LF, TAB,
    /// NEL, U+2028, ideographic space…) becomes one space, and the ends are trimmed.
    ///
    /// Works on scalars, not `Character`s: a cluster that starts with a space and carries a
    /// combining mark or a joiner (`" \u{301}"`) is white space to `Character.isWhitespace`, and
    /// splitting on it dropped the mark from the user's name in the subject.
    package static func singleLine(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !scalars.isEmpty
            } else {
                if pendingSpace { scalars.append(" ") }
                pendingSpace = false
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// The file name of `part` (`subject.mustache`, `body.txt.mustache`, `body.html.mustache`) for `kind`.
    package static func fileName(_ part: String, kind: DeliveryJob.Kind) -> String {
        kind == .alert ? part : "\(kind.rawValue).\(part)"
    }

    /// The built-in subject and text of each kind in the service's default language (the files of
    /// `config/templates/zh-Hans`).
    package static let defaults: [DeliveryJob.Kind: (subject: String, text: String)] = {
        let files = LanguageFolders.builtIn[.serviceDefault]!.files
        return Dictionary(uniqueKeysWithValues: DeliveryJob.Kind.mailed.map { kind in
            (kind, (files[fileName("subject.mustache", kind: kind)]!, files[fileName("body.txt.mustache", kind: kind)]!))
        })
    }()

    /// The built-in default subject (same text as `config/templates/zh-Hans/subject.mustache`).
    package static var defaultSubject: String { defaults[.alert]!.subject }
    /// The built-in default body (same text as `config/templates/zh-Hans/body.txt.mustache`).
    package static var defaultText: String { defaults[.alert]!.text }
}
