import Values

/// How many users were skipped on one day for one reason (`status = 'skipped'`, `last_error`).
public struct SkipCount: Sendable, Equatable {
    /// The day.
    public let date: CalendarDate
    /// The recorded reason (for example `emergency email: missing @`), control characters replaced.
    public let reason: String
    /// How many users.
    public let count: Int
}
