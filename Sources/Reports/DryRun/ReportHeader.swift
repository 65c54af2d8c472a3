import Values

/// The facts at the top of a dry-run report.
public struct ReportHeader: Sendable, Equatable {
    /// `D`.
    public let runDate: CalendarDate
    /// The service zone's identifier.
    public let timeZone: String
    /// `MISS_THRESHOLD_DAYS`.
    public let thresholdDays: Int
    /// `CATCH_UP_DAYS`.
    public let catchUpDays: Int
    /// Always true for the dry run.
    public let dryRun: Bool
}
