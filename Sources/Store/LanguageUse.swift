import Foundation

/// The languages the app's rows name (`users.language`, `emergency_contacts.language`), as
/// stored, with how many users and contacts name each: what `check` reports, so that an operator
/// sees who falls back to another language (docs/languages.md). Reads both tables once.
package enum LanguageUse {
    /// One stored text and how many rows name it.
    package struct Named: Sendable, Equatable {
        /// The text as the app wrote it (trimmed of nothing: what a run reads).
        package var text: String
        /// Users whose `language` it is.
        package var users: Int
        /// Contacts whose `language` it is.
        package var contacts: Int
    }

    /// The texts named, most rows first, at most `limit` of them.
    package static func read(_ db: PGConnection, limit: Int = 50) throws -> [Named] {
        try db.execute(SQLStatement("""
            SELECT x.language, sum(x.users)::int AS users, sum(x.contacts)::int AS contacts
            FROM (SELECT language, 1 AS users, 0 AS contacts FROM users WHERE language IS NOT NULL
                  UNION ALL
                  SELECT language, 0, 1 FROM emergency_contacts WHERE language IS NOT NULL) x
            GROUP BY x.language
            ORDER BY sum(x.users) + sum(x.contacts) DESC, x.language
            LIMIT $limit::int
            """), ["limit": String(limit)]).rows.compactMap { row in
            row.string("language").map { Named(text: $0, users: row.int("users") ?? 0, contacts: row.int("contacts") ?? 0) }
        }
    }
}
