import Rule

extension LifecycleStore {
    /// Where the owed-message queries' rows go when they are not read whole: a page at a time,
    /// each query's rows read through a cursor (`PGConnection.stream`), so that a run owing many
    /// messages at once — all-clears after a long stop, the escalations of a day of many alerts —
    /// holds a page of them, not all (a message read whole is about 1.9 KB: its row, its `Due` and
    /// its job). The pages come in `due`'s order; the last, smaller one when `due` ends. Used by
    /// the one thread that reads through the store it is given to — and so not Sendable: `each`
    /// is that thread's closure (often one made escaping only for the read, by
    /// `withoutActuallyEscaping`), and `page` is filled between its calls.
    package final class Pages {
        /// The most rows a page holds (and a cursor fetches at once).
        package let size: Int
        private let each: ([Due]) throws -> Void
        private var page: [Due] = []

        /// Hands the owed messages to `each`, `size` at a time.
        package init(size: Int, each: @escaping ([Due]) throws -> Void) {
            self.size = max(1, size)
            self.each = each
        }

        func add(_ due: [Due]) throws {
            page += due
            if page.count >= size { try flush() }
        }

        /// Hands over what the page holds.
        func flush() throws {
            guard !page.isEmpty else { return }
            let full = page
            page.removeAll(keepingCapacity: true)
            try each(full)
        }
    }

    /// Runs one owed-message query: each row made into at most one message by `make`. Returns
    /// them all, or — with `pages` — none: they went to the pages.
    func owed(_ db: PGConnection, _ statement: SQLStatement, _ binds: [String: String?],
              _ make: (PGRow) -> Due?) throws -> [Due] {
        try owedMany(db, statement, binds) { row in make(row).map { [$0] } ?? [] }
    }

    /// Runs one owed-message query whose row may owe several messages (`make`), as `owed` does.
    func owedMany(_ db: PGConnection, _ statement: SQLStatement, _ binds: [String: String?],
                  _ make: (PGRow) -> [Due]) throws -> [Due] {
        guard let pages else { return try db.execute(statement, binds).rows.flatMap(make) }
        try db.stream(statement, binds, batch: pages.size) { row in try pages.add(make(row)) }
        return []
    }
}
