import Foundation

/// Masks contact addresses for logs and reports: `alice@example.com` → `a***@example.com`.
/// Works on raw, possibly invalid, values too: without an `@` only the first character is kept.
public enum EmailMasking {
    /// The masked form of `raw`.
    public static func mask(_ raw: String) -> String {
        let cleaned = ReportRow.printable(raw.trimmingCharacters(in: .whitespaces))
        guard let first = cleaned.first else { return "" }
        guard let at = cleaned.lastIndex(of: "@") else { return "\(first)***" }
        return "\(first)***\(cleaned[at...])"
    }
}
