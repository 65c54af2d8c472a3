import Values

/// How many users were skipped on one day for one reason (`status = 'skipped'`, `last_error`).
package struct SkipCount: Sendable, Equatable {
    /// The day.
    package let date: CalendarDate
    /// The recorded reason (for example `emergency email: missing @`), control characters replaced.
    package let reason: String
    /// How many users.
    package let count: Int
}
