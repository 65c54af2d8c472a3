import Values

/// The bookkeeping of the cut lists of problem rows, for the writers that stop at a readable
/// number per day (the table and the HTML page): which day is being listed, how many of its rows
/// were listed, and — when the day ends — how many more it had.
package struct ProblemListing {
    private var day: (date: CalendarDate, listed: Int)?

    package init() {}

    /// Counts one listed row of `date`. When the row starts a new day, returns the ending day and
    /// the number of its rows that were not listed (`more > 0`: say so before this row).
    package mutating func add(_ date: CalendarDate, overview: HistoryOverview) -> (date: CalendarDate, more: Int)? {
        let ended = day.map { $0.date } != date ? close(overview: overview) : nil
        day = (date, (day?.listed ?? 0) + 1)
        return ended
    }

    /// Ends the day being listed: it and how many of its problem rows were not listed, when any.
    package mutating func close(overview: HistoryOverview) -> (date: CalendarDate, more: Int)? {
        defer { day = nil }
        guard let day, let counts = overview.counts(on: day.date) else { return nil }
        let more = counts.failed + counts.retryPending + counts.sending - day.listed
        return more > 0 ? (day.date, more) : nil
    }

    /// Forgets the day (a new section begins).
    package mutating func reset() { day = nil }
}
