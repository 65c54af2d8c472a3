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
        name = evaluation.name?.value ?? ReportRow.printable(candidate.rawName ?? "")
        email = evaluation.email?.address ?? (candidate.rawEmail ?? "")
        lastCheckIn = candidate.lastCheckIn
        missedDays = evaluation.missedDays
        decision = evaluation.decision
        reason = evaluation.reason
    }

    /// The address as reports show it: masked (`a***@example.com`) unless `full`.
    public func displayEmail(full: Bool) -> String {
        full ? ReportRow.printable(email) : EmailMasking.mask(email)
    }

    /// Control characters replaced by U+FFFD so that a hostile value cannot move a terminal's cursor.
    static func printable(_ text: String) -> String {
        // General category Cc is exactly U+0000–U+001F and U+007F–U+009F: compare values, no
        // property lookups, and return the string itself when there is nothing to replace.
        func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? "\u{FFFD}" : $0 }))
    }
}
