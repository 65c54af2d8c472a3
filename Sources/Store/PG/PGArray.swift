/// PostgreSQL array literals for `unnest($n::type[])` parameters: one round trip for many rows.
package enum PGArray {
    /// `{"a","b",NULL}`: every element quoted and escaped; nil is SQL NULL.
    package static func literal(_ values: [String?]) -> String {
        "{" + values.map { value in
            guard let value else { return "NULL" }
            return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}"
    }

    /// The same for non-optional values.
    package static func literal(_ values: [String]) -> String { literal(values.map(Optional.some)) }
}
