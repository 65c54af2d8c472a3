/// PostgreSQL array literals for `unnest($n::type[])` parameters: one round trip for many rows.
package enum PGArray {
    /// `{"a","b",NULL}`: every element quoted, `\` and `"` escaped with a backslash; nil is SQL NULL.
    ///
    /// Built byte by byte into one buffer: a claim statement carries a dozen of these per batch,
    /// and Foundation's `replacingOccurrences` (two passes and two strings per element) was a
    /// tenth of the dispatcher's CPU.
    package static func literal(_ values: [String?]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(2 + values.reduce(0) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let value else {
                bytes.append(contentsOf: "NULL".utf8)
                continue
            }
            bytes.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The same for non-optional values.
    package static func literal(_ values: [String]) -> String { literal(values.map(Optional.some)) }
}
