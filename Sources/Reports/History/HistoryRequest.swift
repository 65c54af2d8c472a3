import Foundation
import Values

/// What a history report covers: a period of days, optionally one user, and how much it shows.
package struct HistoryRequest: Sendable, Equatable {
    /// The longest period a report covers (about ten years), so that a typo cannot ask for millennia.
    package static let maximumDays = 3660

    /// The first day (`--from`), a run date / notification date.
    package let from: CalendarDate
    /// The last day (`--to`), inclusive.
    package let to: CalendarDate
    /// The user of a per-user report (`--user`), lowercased; nil for the per-day report.
    package let userID: String?
    /// Show contact addresses (and addresses inside server replies) in full (`--full-emails`).
    package let fullEmails: Bool
    /// At most this many failed/retry/sending rows are listed per day (the rest are counted);
    /// nil lists them all. The table and HTML formats limit, JSON and CSV do not.
    package let problemLimitPerDay: Int?
    /// Only the users whose days are counted in this zone, and the runs that served them
    /// (`--zone`); nil: everyone.
    package var zone: TimeZone?

    /// A checked request.
    package init(from: CalendarDate, to: CalendarDate, userID: String? = nil, fullEmails: Bool = false,
                problemLimitPerDay: Int? = nil) throws(HistoryError) {
        guard from <= to else { throw .emptyPeriod(from: from, to: to) }
        let days = to.days(since: from) + 1
        guard days <= Self.maximumDays else { throw .periodTooLong(days: days) }
        if let userID { guard Self.isUUID(userID) else { throw .invalidUserID(userID) } }
        self.from = from
        self.to = to
        self.userID = userID?.lowercased()
        self.fullEmails = fullEmails
        self.problemLimitPerDay = problemLimitPerDay
    }

    /// Parses the command line's values: `to` defaults to `today` (in the service zone), `from` to
    /// six days before `to` (a week).
    package static func parse(from: String?, to: String?, user: String?, fullEmails: Bool,
                             problemLimitPerDay: Int?, today: CalendarDate) throws(HistoryError) -> HistoryRequest {
        let last: CalendarDate
        if let to {
            guard let date = CalendarDate(parsing: to) else { throw .invalidDate(option: "--to", value: to) }
            last = date
        } else {
            last = today
        }
        let first: CalendarDate
        if let from {
            guard let date = CalendarDate(parsing: from) else { throw .invalidDate(option: "--from", value: from) }
            first = date
        } else {
            first = last.adding(days: -6)
        }
        return try HistoryRequest(from: first, to: last, userID: user, fullEmails: fullEmails,
                                  problemLimitPerDay: problemLimitPerDay)
    }

    /// Every day of the period, in order.
    package var days: [CalendarDate] { (0...to.days(since: from)).map { from.adding(days: $0) } }

    /// Whether `text` is a UUID in its usual text form (what `users.id` holds).
    package static func isUUID(_ text: String) -> Bool {
        text.utf8.count == 36 && UUID(uuidString: text) != nil
    }
}
