import CLibPQ

/// A complete query result (owned; freed with the object). Values are libpq's text format.
package final class PGResult {
    private let handle: OpaquePointer

    package init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    /// Number of rows.
    package var count: Int { Int(PQntuples(handle)) }

    /// Number of columns.
    package var columnCount: Int { Int(PQnfields(handle)) }

    /// Column positions by name, looked up once per result (a streamed batch reads 2,000 rows by name).
    private var positions: [String: Int] = [:]

    /// The position of the column named `name`, -1 when the result has none.
    package func position(of name: String) -> Int {
        if let known = positions[name] { return known }
        let position = Int(PQfnumber(handle, name))
        positions[name] = position
        return position
    }

    /// Row `index`.
    package subscript(index: Int) -> PGRow { PGRow(result: handle, index: Int32(index), owner: self) }

    /// Rows an INSERT, UPDATE or DELETE changed (`PQcmdTuples`); 0 for other commands.
    package var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// All rows, in order.
    package var rows: [PGRow] { (0..<count).map { self[$0] } }
}
