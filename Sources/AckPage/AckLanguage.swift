/// The page's language, chosen from the browser's `Accept-Language` (Chinese and
/// English). Chinese — the product's own — when the header names neither.
package enum AckLanguage: String, Sendable, CaseIterable {
    case zh
    case en

    /// The `lang` attribute and `Content-Language` header.
    package var tag: String { self == .zh ? "zh-CN" : "en" }

    /// The language of the best-weighted range of `header` that is Chinese or English (RFC 9110
    /// §12.5.4: `q` weights, the first of equal weights wins, `q=0` means "not this"); Chinese
    /// when none is, or without the header.
    package static func choose(_ header: String?) -> AckLanguage {
        var best: (language: AckLanguage, weight: Double)?
        for part in (header ?? "").split(separator: ",").prefix(32) {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let range = fields.first, !range.isEmpty else { continue }
            var weight = 1.0
            for field in fields.dropFirst() where field.hasPrefix("q=") {
                weight = Double(field.dropFirst(2)) ?? 0
            }
            let language: AckLanguage? = range == "zh" || range.hasPrefix("zh-") ? .zh
                : range == "en" || range.hasPrefix("en-") ? .en : nil
            guard let language, weight > 0 else { continue }
            if best == nil || weight > best!.weight { best = (language, weight) }
        }
        return best?.language ?? .zh
    }
}
