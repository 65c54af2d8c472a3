import Values

/// The rule's verdict on one candidate: missed days, decision, and what was cleaned or rejected.
public struct Evaluation: Sendable {
    /// `m`, consecutive missed days.
    public var missedDays: Int
    /// What to do.
    public var decision: Decision
    /// Why the user is skipped (for `invalid_email` / `invalid_name`); never contains the full address.
    public var reason: String?
    /// The validated contact address (present for `.send`, and for `.invalidName`).
    public var email: EmailAddress?
    /// The cleaned display name (present for `.send`).
    public var name: DisplayName?
    /// `L' = max(L, paused_until)`: where the missed days are counted from.
    public var effectiveLastCheckIn: CalendarDate?
    /// The newer account (for `.superseded`).
    public var supersededBy: OtherAccount?

    /// Creates an evaluation.
    public init(missedDays: Int, decision: Decision, reason: String? = nil, email: EmailAddress? = nil, name: DisplayName? = nil) {
        self.missedDays = missedDays
        self.decision = decision
        self.reason = reason
        self.email = email
        self.name = name
    }

    /// A copy with `L'` and the newer account set.
    package func with(effectiveLastCheckIn: CalendarDate?, supersededBy: OtherAccount? = nil) -> Evaluation {
        var copy = self
        copy.effectiveLastCheckIn = effectiveLastCheckIn
        copy.supersededBy = supersededBy
        return copy
    }
}
