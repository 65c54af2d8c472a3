import Foundation

/// The facts at the top of a history report.
public struct HistoryHeader: Sendable {
    /// What the report covers.
    public let request: HistoryRequest
    /// The service zone (`NOTIFY_TIME_ZONE`): days are its calendar days, times are shown in it.
    public let timeZone: TimeZone
    /// `MISS_THRESHOLD_DAYS`.
    public let thresholdDays: Int
    /// `CATCH_UP_DAYS`.
    public let catchUpDays: Int
    /// The user of a per-user report.
    public let user: UserProfile?
    /// When the report was made.
    public let generatedAt: Date

    /// Creates a header.
    public init(request: HistoryRequest, timeZone: TimeZone, thresholdDays: Int, catchUpDays: Int,
                user: UserProfile?, generatedAt: Date = Date()) {
        self.request = request
        self.timeZone = timeZone
        self.thresholdDays = thresholdDays
        self.catchUpDays = catchUpDays
        self.user = user
        self.generatedAt = generatedAt
    }
}
