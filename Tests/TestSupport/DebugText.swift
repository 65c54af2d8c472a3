/// Hostile test inputs shown in failure messages: as Swift literals (controls escaped), cut short.
public enum DebugText {
    /// `text` as a Swift literal (`"a\r\nb"`), cut to about `limit` characters with the full size
    /// noted; `NULL` for nil.
    public static func literal(_ text: String?, limit: Int = 120) -> String {
        guard let text else { return "NULL" }
        let literal = String(reflecting: text)
        return literal.count <= limit ? literal : String(literal.prefix(limit)) + "…(\(text.utf8.count) bytes)"
    }
}
