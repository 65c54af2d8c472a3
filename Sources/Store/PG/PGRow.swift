import CLibPQ
import Values

/// One row of a result, read by column name (`row.string("user_id")`: the statement's `AS` names
/// its columns). Reading by position is the package's own (the test database's generic rows). A
/// row taken from a `PGResult` keeps that result alive; a row handed to a streaming callback is
/// valid only during the callback.
package struct PGRow {
    package let result: OpaquePointer
    package let index: Int32
    /// The owning result, retained so that the row outlives the expression that produced it.
    package let owner: PGResult?

    package init(result: OpaquePointer, index: Int32, owner: PGResult? = nil) {
        self.result = result
        self.index = index
        self.owner = owner
    }

    /// The text value of column `column`, nil for SQL NULL.
    func string(_ column: Int) -> String? {
        if PQgetisnull(result, index, Int32(column)) == 1 { return nil }
        return String(cString: PQgetvalue(result, index, Int32(column)))
    }

    /// Column `column` as an integer, nil for NULL or non-numeric text.
    func int(_ column: Int) -> Int? { string(column).flatMap { Int($0) } }

    /// Column `column` as a boolean (`t`/`f`), false for NULL.
    func bool(_ column: Int) -> Bool { string(column) == "t" }

    /// Column `column` as a date (`YYYY-MM-DD`), nil for NULL.
    func date(_ column: Int) -> CalendarDate? { string(column).flatMap { CalendarDate(parsing: $0) } }

    /// The position of the column named `name` (as the statement's `AS` names it, lower case); a
    /// name the result lacks is a programming error: the statement and its reader disagree.
    func column(_ name: String) -> Int {
        let position = owner?.position(of: name) ?? Int(PQfnumber(result, name))
        precondition(position >= 0, "PGRow: the result has no column \(name)")
        return position
    }

    /// The text value of the column named `name`, nil for SQL NULL.
    package func string(_ name: String) -> String? { string(column(name)) }

    /// The column named `name` as an integer, nil for NULL or non-numeric text.
    package func int(_ name: String) -> Int? { int(column(name)) }

    /// The column named `name` as a boolean (`t`/`f`), false for NULL.
    package func bool(_ name: String) -> Bool { bool(column(name)) }

    /// The column named `name` as a date, nil for NULL.
    package func date(_ name: String) -> CalendarDate? { date(column(name)) }

    /// Whether the result has a column named `name`.
    package func hasColumn(_ name: String) -> Bool { (owner?.position(of: name) ?? Int(PQfnumber(result, name))) >= 0 }
}
