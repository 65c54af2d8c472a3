import CLibPQ

/// A complete query result (owned; freed with the object). Values are libpq's text format.
public final class PGResult {
    private let handle: OpaquePointer

    package init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    /// Number of rows.
    public var count: Int { Int(PQntuples(handle)) }

    /// Number of columns.
    public var columnCount: Int { Int(PQnfields(handle)) }

    /// Row `index`.
    public subscript(index: Int) -> PGRow { PGRow(result: handle, index: Int32(index), owner: self) }

    /// All rows, in order.
    public var rows: [PGRow] { (0..<count).map { self[$0] } }
}
