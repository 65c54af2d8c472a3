import Foundation
import Values

/// How the page chooses its language among those it is written in — the languages with the
/// page's texts (`page.texts`): the shipped simplified Chinese (the product's own), traditional
/// Chinese and English, and every folder of `TEMPLATE_DIR` that has the file (`ru/`). Pure.
package enum AckLanguage {
    /// The page's language for a contact who opened their link: the contact's own language as the
    /// app stored it, else the browser's, else the user's, else the service's `DEFAULT_LANGUAGE`
    /// (`fallback`), else simplified Chinese. Each stored tag is looked up the way mail templates
    /// are (`zh-TW` → traditional, `en-GB` → English); one the page is not written in (not one of
    /// `available`) passes to the next. The contact's comes before the browser's because it is
    /// what the contact chose in the app, and a borrowed phone's browser says nothing of its reader.
    package static func choose(contact: String?, browser header: String?, user: String?, fallback: LanguageTag?,
                               available: Set<LanguageTag>) -> LanguageTag {
        matching(contact, available) ?? fromBrowser(header, available) ?? matching(user, available)
            ?? fallback.flatMap { matching($0.identifier, available) } ?? .serviceDefault
    }

    /// The page's language where no contact is known (the neutral page, a limit): the browser's,
    /// else `fallback`'s, else simplified Chinese.
    package static func choose(browser header: String?, fallback: LanguageTag?, available: Set<LanguageTag>) -> LanguageTag {
        choose(contact: nil, browser: header, user: nil, fallback: fallback, available: available)
    }

    /// The language of `available` a stored tag finds through its lookups (`zh-Hant-TW` →
    /// `zh-Hant`, `zh` → `zh-Hans`), or nil: not a tag, or not a language the page is written in.
    package static func matching(_ text: String?, _ available: Set<LanguageTag>) -> LanguageTag? {
        guard let text, let tag = LanguageTag(text) else { return nil }
        return tag.lookups.first(where: available.contains)
    }

    /// The language of the best-weighted range of an `Accept-Language` header that the page is
    /// written in (RFC 9110 §12.5.4: `q` weights, the first of equal weights wins, `q=0` means
    /// "not this"), or nil when none is, or without the header.
    package static func fromBrowser(_ header: String?, _ available: Set<LanguageTag>) -> LanguageTag? {
        var best: (language: LanguageTag, weight: Double)?
        for part in (header ?? "").split(separator: ",").prefix(32) {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let range = fields.first, !range.isEmpty else { continue }
            var weight = 1.0
            for field in fields.dropFirst() where field.lowercased().hasPrefix("q=") {
                weight = Double(field.dropFirst(2)) ?? 0
            }
            guard let language = matching(range, available), weight > 0 else { continue }
            if best == nil || weight > best!.weight { best = (language, weight) }
        }
        return best?.language
    }
}
