/// Escaping for HTML and SVG text and attribute values: every value from the database passes
/// through `escape` before it reaches the page.
enum HTMLText {
    /// `text` with `& < > " '` replaced by character references (safe in element content and in
    /// quoted attribute values).
    static func escape(_ text: String) -> String {
        guard text.contains(where: { "&<>\"'".contains($0) }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
