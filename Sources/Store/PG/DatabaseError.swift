/// A failure talking to PostgreSQL.
///
/// The description carries libpq's message and SQLSTATE, never the connection string (which may
/// hold a password); libpq's own messages name host, port and user but not the password.
package struct DatabaseError: Error, CustomStringConvertible, Sendable {
    /// Whether the server could not be reached or the connection broke, or a statement failed.
    package enum Kind: Sendable { case unreachable, statement }

    /// What failed.
    package let kind: Kind
    /// The five-character SQLSTATE, when the server sent one.
    package let sqlState: String?
    /// libpq's message, trimmed.
    package let message: String
    /// True when a new session got no answer within `PGConnection.sessionWaitSeconds`: the server,
    /// or a connection pooler with every session of its pool taken (PgBouncer in session mode
    /// queues the client without a word), kept it waiting. Of kind `unreachable`.
    package let sessionWait: Bool
    /// True when a statement waited for a lock another session holds for longer than
    /// `lock_timeout` (`PGConnection.lockWaitSeconds`; SQLSTATE 55P03): the message names the
    /// wait and its bound. Of kind `statement`: the run fails, its work stays due.
    package let lockWait: Bool

    /// SQLSTATE `lock_not_available`: `lock_timeout` passed.
    package static let lockTimeoutState = "55P03"

    /// Creates an error.
    package init(kind: Kind, sqlState: String?, message: String, sessionWait: Bool = false, lockWait: Bool = false) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.sessionWait = sessionWait
        self.lockWait = lockWait
    }

    /// True for a unique-key violation (`23505`).
    package var isUniqueViolation: Bool { sqlState == "23505" }

    /// True when a statement failed for the data it was given — SQLSTATE class 22 (data exception)
    /// or 23 (integrity constraint violation) — rather than for the connection, a timeout, a
    /// missing right or a bug: the error one user's row can cause without the others failing too.
    package var isDataError: Bool {
        kind == .statement && (sqlState?.hasPrefix("22") == true || sqlState?.hasPrefix("23") == true)
    }

    package var description: String {
        let prefix = kind == .unreachable ? "database unreachable" : "database error"
        return sqlState.map { "\(prefix) [\($0)]: \(message)" } ?? "\(prefix): \(message)"
    }
}
