/// PostgreSQL array literals for `unnest($n::type[])` parameters: one round trip for many rows.
enum PGArray {
    /// `{"a","b",NULL}`: every element quoted and escaped; nil is SQL NULL.
    static func literal(_ values: [String?]) -> String {
        "{" + values.map { value in
            guard let value else { return "NULL" }
            return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}"
    }

    /// The same for non-optional values.
    static func literal(_ values: [String]) -> String { literal(values.map(Optional.some)) }
}
