import Foundation

/// A language a contact, a user or the service is written to in: a BCP 47 tag as the app stores
/// it (`en`, `zh-Hant-TW`, `ru`), checked and written in its canonical case (`zh-hant-tw` →
/// `zh-Hant-TW`, `zh_TW` → `zh-TW`).
///
/// Only the language, script and region subtags are kept: a template folder is chosen by them,
/// and a variant or an extension (`-u-ca-buddhist`) names nothing a folder could hold. What the
/// tag leaves out is completed by ICU's likely subtags (through Foundation's `Locale.Language`),
/// not by a table of our own: `zh-TW` is written in traditional characters, `zh` and `zh-CN` in
/// simplified ones.
package struct LanguageTag: Sendable, Hashable, CustomStringConvertible {
    /// The canonical tag: `language[-Script][-REGION]`.
    package let identifier: String
    /// The language subtag (lower case, 2–3 letters).
    package let language: String
    /// The script subtag as written (`Hant`), nil when the tag names none.
    package let script: String?
    /// The region subtag as written (`TW`, `419`), nil when the tag names none.
    package let region: String?

    /// The tag `text` names, or nil when it is not one: an empty text, a language subtag that is
    /// not 2–3 letters, a script that is not 4 letters, a region that is not 2 letters or 3
    /// digits. Private-use and grandfathered tags (`x-…`, `i-…`) are not languages a template can
    /// be written in. A variant or an extension after the region is dropped.
    package init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy(\.isASCIILetter),
              parts.count <= 16, parts.allSatisfy({ !$0.isEmpty && $0.count <= 8 && $0.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit } })
        else { return nil }
        var rest = parts.dropFirst()
        var script: String?
        var region: String?
        if let next = rest.first, next.count == 4, next.allSatisfy(\.isASCIILetter) {
            script = next.prefix(1).uppercased() + next.dropFirst().lowercased()
            rest = rest.dropFirst()
        }
        if let next = rest.first, (next.count == 2 && next.allSatisfy(\.isASCIILetter)) || (next.count == 3 && next.allSatisfy(\.isASCIIDigit)) {
            region = next.uppercased()
            rest = rest.dropFirst()
        }
        // What follows must be a variant (5–8 characters, or a digit and 3) or an extension
        // (a singleton and its subtags); anything else is not a tag.
        if let next = rest.first, next.count < 4, !(next.count == 1) { return nil }
        self.init(language: first.lowercased(), script: script, region: region)
    }

    private init(language: String, script: String?, region: String?) {
        self.language = language
        self.script = script
        self.region = region
        identifier = ([language] + [script, region].compactMap { $0 }).joined(separator: "-")
    }

    package var description: String { identifier }

    /// The tags to look for, most precise first: the tag as written, then with the script and
    /// region ICU's likely subtags complete it with, then shortened one subtag at a time —
    /// `zh-TW` → `zh-TW`, `zh-Hant-TW`, `zh-Hant`, `zh`; `zh` → `zh`, `zh-Hans-CN`, `zh-Hans`;
    /// `en-GB` → `en-GB`, `en-Latn-GB`, `en-Latn`, `en`. Each once.
    ///
    /// Each tag's list is worked out once a process (`known`): ICU's likely subtags, asked once
    /// per contact of every listed user, were a quarter of the dry run's CPU at ten million
    /// users, and a service's users name a handful of tags.
    package var lookups: [LanguageTag] {
        if let found = Self.known.withLock({ $0[identifier] }) { return found }
        let found = worked
        Self.known.withLock { known in
            // The stored tags are the app's: bounded, whatever it writes.
            if known.count < Self.knownLimit { known[identifier] = found }
        }
        return found
    }

    /// The tags' lookups worked out so far, by identifier.
    private static let known = Locked<[String: [LanguageTag]]>([:])
    /// How many tags' lookups `known` keeps.
    package static let knownLimit = 4096

    /// `lookups`, worked out.
    private var worked: [LanguageTag] {
        let likely = Locale.Language(identifier: Locale.Language(identifier: identifier).maximalIdentifier)
        let script = self.script ?? likely.script?.identifier
        let region = self.region ?? likely.region?.identifier.uppercased()
        // ICU may name another language as the likely one (`iw` → `he`); the tag's own comes first.
        var found: [LanguageTag] = []
        for tag in [self,
                    LanguageTag(language: language, script: script, region: region),
                    LanguageTag(language: language, script: script, region: nil),
                    LanguageTag(language: language, script: nil, region: self.region),
                    LanguageTag(language: language, script: nil, region: nil)] where !found.contains(tag) {
            found.append(tag)
        }
        return found
    }

    /// The service's language unless `DEFAULT_LANGUAGE` says otherwise: the design's text is
    /// simplified Chinese.
    package static let serviceDefault = LanguageTag("zh-Hans")!

    /// The tag's `Locale`, for Foundation's formatters (plural rules, month names).
    package var locale: Locale { Locale(identifier: identifier) }
}

extension LanguageTag {
    /// The language chosen for one recipient, and how: a pure decision over what the rows say and
    /// which languages have templates.
    package struct Choice: Sendable, Equatable {
        /// The language the recipient is written to in: one of the available ones.
        package let tag: LanguageTag
        /// The tag that was asked for first (the contact's, else the user's, else the default's),
        /// as stored; nil when neither row names one.
        package let requested: String?
        /// Why the chosen language is not the one asked for, or nil when it is (or a shorter form
        /// of it, `zh-Hant` for `zh-Hant-TW`).
        package let fallback: Fallback?

        /// Why a recipient is not written to in the language asked for.
        package enum Fallback: Sendable, Equatable {
            /// The stored text is not a language tag (`"klingon!"`): reported, never a reason to skip.
            case notATag(String)
            /// No templates in that language, nor in a shorter form of it.
            case notAvailable(LanguageTag)
        }

        /// Creates the value.
        package init(tag: LanguageTag, requested: String?, fallback: Fallback?) {
            self.tag = tag
            self.requested = requested
            self.fallback = fallback
        }

        /// Chooses among `available` (the languages with templates; `fallback` must be one): the
        /// contact's language, else the user's, else `fallback`, each through its `lookups`. A
        /// stored tag that is not one, or that no template answers, passes to the next.
        package static func choose(contact: String?, user: String?, fallback: LanguageTag,
                                   available: Set<LanguageTag>) -> Choice {
            let asked = [contact, user].compactMap { $0?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            var why: Fallback?
            for text in asked {
                guard let tag = LanguageTag(text) else {
                    why = why ?? .notATag(text)
                    continue
                }
                if let found = tag.lookups.first(where: available.contains) {
                    return Choice(tag: found, requested: asked.first, fallback: why)
                }
                why = why ?? .notAvailable(tag)
            }
            let chosen = fallback.lookups.first(where: available.contains) ?? fallback
            return Choice(tag: chosen, requested: asked.first, fallback: why)
        }
    }
}

extension LanguageTag.Choice.Fallback: CustomStringConvertible {
    /// Why a recipient falls back, as reports write it: `not a language tag: "klingon!"`,
    /// `no templates in fr-CA`.
    package var description: String {
        switch self {
        case .notATag(let text): "not a language tag: \"\(text)\""
        case .notAvailable(let tag): "no templates in \(tag)"
        }
    }
}

private extension Character {
    var isASCIILetter: Bool { isASCII && isLetter }
    var isASCIIDigit: Bool { isASCII && isNumber }
}
