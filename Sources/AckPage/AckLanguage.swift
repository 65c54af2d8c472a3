import Foundation
import Values

/// The languages the page is written in: simplified Chinese (the product's own), traditional
/// Chinese and English — the languages the service's own mails are shipped in.
package enum AckLanguage: String, Sendable, CaseIterable {
    case zhHans = "zh-Hans"
    case zhHant = "zh-Hant"
    case en

    /// The `lang` attribute and `Content-Language` header.
    package var tag: String { rawValue }

    /// The page's language for a contact who opened their link: the contact's own language as the
    /// app stored it, else the browser's, else the user's, else the service's `DEFAULT_LANGUAGE`,
    /// else simplified Chinese. Each stored tag is looked up the way mail templates are
    /// (`zh-TW` → traditional, `en-GB` → English); one the page is not written in passes to the
    /// next. The contact's comes before the browser's because it is what the contact chose in the
    /// app, and a borrowed phone's browser says nothing of its reader. Pure.
    package static func choose(contact: String?, browser header: String?, user: String?, fallback: LanguageTag?) -> AckLanguage {
        matching(contact) ?? fromBrowser(header) ?? matching(user) ?? fallback.flatMap { matching($0.identifier) } ?? .zhHans
    }

    /// The page's language where no contact is known (the neutral page, a limit): the browser's,
    /// else `fallback`'s, else simplified Chinese.
    package static func choose(browser header: String?, fallback: LanguageTag?) -> AckLanguage {
        choose(contact: nil, browser: header, user: nil, fallback: fallback)
    }

    /// The page language a stored tag finds through its lookups (`zh-Hant-TW` → `zh-Hant`, `zh`
    /// → `zh-Hans`), or nil: not a tag, or not a language the page is written in.
    package static func matching(_ text: String?) -> AckLanguage? {
        guard let text, let tag = LanguageTag(text) else { return nil }
        for lookup in tag.lookups {
            if let found = AckLanguage(rawValue: lookup.identifier) { return found }
        }
        return nil
    }

    /// The language of the best-weighted range of an `Accept-Language` header that the page is
    /// written in (RFC 9110 §12.5.4: `q` weights, the first of equal weights wins, `q=0` means
    /// "not this"), or nil when none is, or without the header.
    package static func fromBrowser(_ header: String?) -> AckLanguage? {
        var best: (language: AckLanguage, weight: Double)?
        for part in (header ?? "").split(separator: ",").prefix(32) {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let range = fields.first, !range.isEmpty else { continue }
            var weight = 1.0
            for field in fields.dropFirst() where field.lowercased().hasPrefix("q=") {
                weight = Double(field.dropFirst(2)) ?? 0
            }
            guard let language = matching(range), weight > 0 else { continue }
            if best == nil || weight > best!.weight { best = (language, weight) }
        }
        return best?.language
    }
}
