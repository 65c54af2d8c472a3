import Foundation

/// The facts at the top of a history report.
package struct HistoryHeader: Sendable {
    /// What the report covers.
    package let request: HistoryRequest
    /// The service zone (`NOTIFY_TIME_ZONE`): days are its calendar days, times are shown in it.
    package let timeZone: TimeZone
    /// `MISS_THRESHOLD_DAYS`.
    package let thresholdDays: Int
    /// `CATCH_UP_DAYS`.
    package let catchUpDays: Int
    /// The user of a per-user report.
    package let user: UserProfile?
    /// When the report was made.
    package let generatedAt: Date

    /// Creates a header.
    package init(request: HistoryRequest, timeZone: TimeZone, thresholdDays: Int, catchUpDays: Int,
                user: UserProfile?, generatedAt: Date = Date()) {
        self.request = request
        self.timeZone = timeZone
        self.thresholdDays = thresholdDays
        self.catchUpDays = catchUpDays
        self.user = user
        self.generatedAt = generatedAt
    }
}
