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

    /// Rows an INSERT, UPDATE or DELETE changed (`PQcmdTuples`); 0 for other commands.
    public var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// All rows, in order.
    public var rows: [PGRow] { (0..<count).map { self[$0] } }
}
