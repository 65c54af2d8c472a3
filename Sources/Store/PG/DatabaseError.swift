/// A failure talking to PostgreSQL.
///
/// The description carries libpq's message and SQLSTATE, never the connection string (which may
/// hold a password); libpq's own messages name host, port and user but not the password.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    /// Whether the server could not be reached or the connection broke, or a statement failed.
    public enum Kind: Sendable { case unreachable, statement }

    /// What failed.
    public let kind: Kind
    /// The five-character SQLSTATE, when the server sent one.
    public let sqlState: String?
    /// libpq's message, trimmed.
    public let message: String

    /// Creates an error.
    public init(kind: Kind, sqlState: String?, message: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
    }

    /// True for a unique-key violation (`23505`).
    public var isUniqueViolation: Bool { sqlState == "23505" }

    public var description: String {
        let prefix = kind == .unreachable ? "database unreachable" : "database error"
        return sqlState.map { "\(prefix) [\($0)]: \(message)" } ?? "\(prefix): \(message)"
    }
}
