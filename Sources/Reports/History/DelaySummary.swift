/// The median and the 90th percentile of a set of delays (the time from a streak's first alert to
/// its first acknowledgement), as the history report shows them — pure.
///
/// Percentiles interpolate between the two nearest values (the value at rank `p × (n − 1)`, counted
/// from 0), as PostgreSQL's `percentile_cont` and most spreadsheets do: the median of an even count
/// is the mean of its two middle values, and one delay is its own median and 90th percentile. A
/// percentile of a few values is a rough figure, but an honest one: it is never a delay further
/// out than the slowest one seen.
package struct DelaySummary: Sendable, Equatable {
    /// How many delays.
    package let count: Int
    /// The middle delay, seconds.
    package let median: Double
    /// The delay that 90 % of the others do not exceed, seconds.
    package let p90: Double

    /// The summary of `delays` (seconds, in any order); nil when there are none.
    package init?(_ delays: [Double]) {
        let sorted = delays.sorted()
        guard let median = Self.percentile(0.5, ofSorted: sorted), let p90 = Self.percentile(0.9, ofSorted: sorted) else { return nil }
        count = sorted.count
        self.median = median
        self.p90 = p90
    }

    /// The `p` percentile (0 … 1) of `sorted` (ascending), interpolated; nil for no values.
    package static func percentile(_ p: Double, ofSorted sorted: [Double]) -> Double? {
        guard let first = sorted.first else { return nil }
        guard sorted.count > 1 else { return first }
        let rank = p * Double(sorted.count - 1)
        let below = Int(rank.rounded(.down))
        let above = min(below + 1, sorted.count - 1)
        return sorted[below] + (sorted[above] - sorted[below]) * (rank - Double(below))
    }

    /// `seconds` as the report prints a delay: `h:mm:ss` (hours not capped at 24), rounded to the second.
    package static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let minutes = total / 60 % 60, rest = total % 60
        return "\(total / 3600):\(minutes < 10 ? "0" : "")\(minutes):\(rest < 10 ? "0" : "")\(rest)"
    }
}
