/// The listed parts of a history report, in the order they arrive. A per-day report has `runs`
/// then `problems`; a per-user report has `streaks` then `notifications`.
package enum HistorySection: String, Sendable, CaseIterable {
    /// The period's runs (`run(_:)`), by day and start time.
    case runs
    /// The failed, retrying and stuck mails (`notification(_:)`), by day: failed, stuck/sending, retry.
    case problems
    /// The user's streaks (`streak(_:)`), oldest first.
    case streaks
    /// The user's notification rows (`notification(_:)`), by date.
    case notifications
}
