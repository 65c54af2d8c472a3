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
    /// Users whose `time_zone` is the empty text: served like users without one (in
    /// `NOTIFY_TIME_ZONE`), and said once here, as no row can tell them from those.
    public var emptyTimeZoneUsers = 0

    /// Creates the header.
    public init(runDate: CalendarDate, timeZone: String, thresholdDays: Int, catchUpDays: Int, dryRun: Bool, emptyTimeZoneUsers: Int = 0) {
        self.runDate = runDate
        self.timeZone = timeZone
        self.thresholdDays = thresholdDays
        self.catchUpDays = catchUpDays
        self.dryRun = dryRun
        self.emptyTimeZoneUsers = emptyTimeZoneUsers
    }
}
