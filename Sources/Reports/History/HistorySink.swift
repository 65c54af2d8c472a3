/// Receives a history report as it is produced, so that a long period is streamed rather than
/// held in memory: first the header and the aggregates (bounded by days), then each section's
/// rows one by one.
///
/// Order of calls: `begin`, then for each section of the report `beginSection`, its rows,
/// `endSection`, then `end`.
package protocol HistorySink: AnyObject {
    /// Called once, first, with the aggregates of the whole period.
    func begin(_ header: HistoryHeader, overview: HistoryOverview) throws
    /// Called before a section's rows (also when it has none).
    func beginSection(_ section: HistorySection) throws
    /// One run (section `runs`).
    func run(_ run: RunRecord) throws
    /// One notification row (sections `problems` and `notifications`).
    func notification(_ record: NotificationRecord) throws
    /// One streak (section `streaks`).
    func streak(_ streak: Streak) throws
    /// Called after a section's rows.
    func endSection(_ section: HistorySection) throws
    /// Called once, last.
    func end() throws
}
