import Values

/// The facts at the top of a dry-run report.
package struct ReportHeader: Sendable, Equatable {
    /// `D`.
    package let runDate: CalendarDate
    /// The service zone's identifier.
    package let timeZone: String
    /// `MISS_THRESHOLD_DAYS`.
    package let thresholdDays: Int
    /// `CATCH_UP_DAYS`.
    package let catchUpDays: Int
    /// Always true for the dry run.
    package let dryRun: Bool
    /// Users whose `time_zone` is the empty text: served like users without one (in
    /// `NOTIFY_TIME_ZONE`), and said once here, as no row can tell them from those.
    package var emptyTimeZoneUsers = 0

    /// Creates the header.
    package init(runDate: CalendarDate, timeZone: String, thresholdDays: Int, catchUpDays: Int, dryRun: Bool, emptyTimeZoneUsers: Int = 0) {
        self.runDate = runDate
        self.timeZone = timeZone
        self.thresholdDays = thresholdDays
        self.catchUpDays = catchUpDays
        self.dryRun = dryRun
        self.emptyTimeZoneUsers = emptyTimeZoneUsers
    }
}
