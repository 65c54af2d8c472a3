import Values

/// Why a history report cannot be made: an invalid request (exit 64), or a database whose schema
/// is older than the report needs (exit 78). Messages never contain a secret.
package enum HistoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `--from` or `--to` is not a real `YYYY-MM-DD` date.
    case invalidDate(option: String, value: String)
    /// `--from` is after `--to`.
    case emptyPeriod(from: CalendarDate, to: CalendarDate)
    /// The period is longer than `HistoryRequest.maximumDays`.
    case periodTooLong(days: Int)
    /// `--user` is not a UUID.
    case invalidUserID(String)
    /// `--user` names no user in the database.
    case unknownUser(String)
    /// A table or column the report reads is missing: the schema was not migrated.
    case schemaNotCurrent(detail: String)

    /// The process exit status this error means (docs/interfaces.md).
    package var exitStatus: ExitStatus {
        switch self {
        case .schemaNotCurrent: .configuration
        default: .usage
        }
    }

    package var description: String {
        switch self {
        case .invalidDate(let option, let value):
            "\(option) must be a real date as YYYY-MM-DD (got \"\(Printable.text(String(value.prefix(40))))\")"
        case .emptyPeriod(let from, let to):
            "--from \(from) is after --to \(to)"
        case .periodTooLong(let days):
            "the period has \(days) days; a report covers at most \(HistoryRequest.maximumDays) days"
        case .invalidUserID(let value):
            "--user must be a user id (a UUID), got \"\(Printable.text(String(value.prefix(60))))\""
        case .unknownUser(let id):
            "--user \(id): no such user in the database"
        case .schemaNotCurrent(let detail):
            "the database schema is not current (\(detail)); run `sileme-notifier migrate`"
        }
    }
}
