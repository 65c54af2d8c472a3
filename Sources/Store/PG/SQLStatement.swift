/// A statement whose parameters have names (`$run_date`, `$user_ids`) instead of positions, so that
/// the SQL and the values bound to it say the same thing: `SQLStatement("… WHERE id = $id")` with
/// `["id": "…"]`. The names become `$1`, `$2`, … once, in order of first use; a name may appear
/// several times. Numbered parameters are left alone, and so is everything inside quotes and `--` comments,
/// and a `$` inside a word (`a$b` is one identifier to PostgreSQL: a table name interpolated into a statement).
/// Binding a name the statement lacks, or leaving one of its names unbound, is a programming
/// error and stops the process: the statement and its caller disagree. The standing parameters —
/// the channel sets of `ChannelSQL`, the same for every statement — are bound wherever a statement
/// names them and its caller does not.
package struct SQLStatement: Sendable, CustomStringConvertible {
    /// The SQL as libpq takes it (`$1`, `$2`, …).
    package let text: String
    /// The parameter names, `$1`'s first.
    package let names: [String]

    /// Parses `sql`'s named parameters (`$` then a letter or `_`, then letters, digits or `_`).
    package init(_ sql: String) {
        var text = ""
        var names: [String] = []
        var quote: Character?
        var index = sql.startIndex
        while index < sql.endIndex {
            let character = sql[index]
            if let open = quote {
                if character == open { quote = nil }
                text.append(character)
                index = sql.index(after: index)
                continue
            }
            if character == "-", sql[index...].hasPrefix("--") {
                // A comment, to the end of its line (its apostrophes open no quote).
                let end = sql[index...].firstIndex(of: "\n") ?? sql.endIndex
                text += sql[index..<end]
                index = end
                continue
            }
            if character == "'" || character == "\"" {
                quote = character
            } else if character == "$", !(text.last.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" } ?? false),
                      let start = sql.index(index, offsetBy: 1, limitedBy: sql.endIndex),
                      start < sql.endIndex, sql[start].isASCII, sql[start].isLetter || sql[start] == "_" {
                var end = start
                while end < sql.endIndex, sql[end].isASCII, sql[end].isLetter || sql[end].isNumber || sql[end] == "_" {
                    end = sql.index(after: end)
                }
                let name = String(sql[start..<end])
                let position = names.firstIndex(of: name) ?? { names.append(name); return names.count - 1 }()
                text += "$\(position + 1)"
                index = end
                continue
            }
            text.append(character)
            index = sql.index(after: index)
        }
        self.text = text
        self.names = names
    }

    /// The values in `$1`, `$2`, … order (nil is SQL NULL).
    package func parameters(_ binds: [String: String?]) -> [String?] {
        let unknown = Set(binds.keys).subtracting(names)
        precondition(unknown.isEmpty, "SQLStatement: no parameter named \(unknown.sorted()) in the statement")
        return names.map { name in
            guard let value = binds[name] ?? ChannelSQL.standing[name] else {
                preconditionFailure("SQLStatement: parameter $\(name) not bound")
            }
            return value
        }
    }

    package var description: String { text }
}

extension PGConnection {
    /// Runs `statement` with its named parameters bound (see `execute(_:_:)`).
    @discardableResult
    package func execute(_ statement: SQLStatement, _ binds: [String: String?] = [:]) throws(DatabaseError) -> PGResult {
        try execute(statement.text, statement.parameters(binds))
    }

    /// Runs `statement` prepared once per session (see `executePrepared(_:_:)`).
    @discardableResult
    package func executePrepared(_ statement: SQLStatement, _ binds: [String: String?]) throws(DatabaseError) -> PGResult {
        try executePrepared(statement.text, statement.parameters(binds))
    }

    /// Streams `statement`'s rows (see `stream(_:_:batch:localSettings:row:)`).
    package func stream(_ statement: SQLStatement, _ binds: [String: String?] = [:], batch: Int = 2000,
                       localSettings: [(name: String, value: String)] = [], row body: (PGRow) throws -> Void) throws {
        try stream(statement.text, statement.parameters(binds), batch: batch, localSettings: localSettings, row: body)
    }
}
