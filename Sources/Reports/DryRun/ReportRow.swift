import Values
import Rule

/// One user in a dry-run report, as the rule judged them.
public struct ReportRow: Sendable, Equatable {
    /// `users.id`.
    public let userID: String
    /// The name as the mail would show it, or the raw name made printable when it is invalid.
    public let name: String
    /// The contact address as stored (validated and normalised when valid).
    public let email: String
    /// `L`.
    public let lastCheckIn: CalendarDate
    /// `m`.
    public let missedDays: Int
    /// The decision.
    public let decision: Decision
    /// Why the user is skipped, when they are.
    public let reason: String?

    /// Builds the row for a candidate and its evaluation.
    public init(candidate: Candidate, evaluation: Evaluation) {
        userID = candidate.userID
        name = evaluation.name?.value ?? Printable.text(candidate.rawName ?? "")
        email = evaluation.email?.address ?? (candidate.rawEmail ?? "")
        lastCheckIn = candidate.lastCheckIn
        missedDays = evaluation.missedDays
        decision = evaluation.decision
        reason = evaluation.reason
    }

    /// The address as reports show it: masked (`a***@example.com`) unless `full`.
    public func displayEmail(full: Bool) -> String {
        full ? Printable.text(email) : EmailMasking.mask(email)
    }
}
