/// The HTML report's two charts, built from the period's aggregates.
package enum HistoryCharts {
    /// Colours of the mails-per-day chart.
    package static let sentColor = "#2e7d32"
    package static let failedColor = "#c62828"
    /// Colours of the missed-days chart (different from the first chart's, so a screenshot can tell
    /// the charts apart).
    package static let notifiedColor = "#1565c0"
    package static let notNotifiedColor = "#f9a825"

    /// Mails sent and not delivered per day: one stacked bar per day of the period (sent below,
    /// failed/pending above), with `data-day`, `data-sent`, `data-failed`.
    package static func mailsPerDay(_ overview: HistoryOverview) -> SVGBarChart {
        let bars = overview.days.map { day in
            let (_, month, dayOfMonth) = day.date.components
            let label = (month < 10 ? "0" : "") + "\(month)-" + (dayOfMonth < 10 ? "0" : "") + "\(dayOfMonth)"
            return SVGBarChart.Bar(
                label: label, values: [day.sent, day.undelivered],
                attributes: [("data-day", day.date.description), ("data-sent", String(day.sent)),
                             ("data-failed", String(day.undelivered))],
                title: "\(day.date): \(day.sent) sent, \(day.undelivered) not delivered (\(day.failed) failed, \(day.bounced) bounced, "
                    + "\(day.retryPending) retry pending, \(day.sending) sending, \(day.legacyNotSent) legacy not sent)")
        }
        return SVGBarChart(
            id: "chart-mails", title: "Mails sent and not delivered per day",
            series: [.init(key: "sent", label: "sent", color: sentColor),
                     .init(key: "failed", label: "failed, retry pending or stuck", color: failedColor)],
            bars: bars, xTitle: "run date", yTitle: "mails")
    }

    /// The distribution of consecutive missed days `m` over the period's notification rows: one bar
    /// per `m` from the smallest to the largest (every value in between, or only the values that
    /// occur when they spread over more than 60), mails accepted below and rows not sent above,
    /// with `data-m`, `data-count`, `data-sent`, `data-not-sent`.
    package static func missDays(_ overview: HistoryOverview) -> SVGBarChart {
        var buckets = overview.missDays
        if let low = buckets.first?.missedDays, let high = buckets.last?.missedDays, high - low <= 60 {
            let present = Dictionary(uniqueKeysWithValues: buckets.map { ($0.missedDays, $0) })
            buckets = (low...high).map { present[$0] ?? MissDaysCount(missedDays: $0, sent: 0, notSent: 0) }
        }
        let bars = buckets.map { bucket in
            SVGBarChart.Bar(
                label: String(bucket.missedDays), values: [bucket.sent, bucket.notSent],
                attributes: [("data-m", String(bucket.missedDays)), ("data-count", String(bucket.count)),
                             ("data-sent", String(bucket.sent)), ("data-not-sent", String(bucket.notSent))],
                title: "m = \(bucket.missedDays): \(bucket.count) notification rows, \(bucket.sent) sent, "
                    + "\(bucket.notSent) not sent")
        }
        var chart = SVGBarChart(
            id: "chart-miss-days", title: "Consecutive missed days at notification",
            series: [.init(key: "sent", label: "mail sent", color: notifiedColor),
                     .init(key: "not-sent", label: "not sent (failed, pending, skipped)", color: notNotifiedColor)],
            bars: bars, xTitle: "consecutive missed days m when the row was written", yTitle: "notification rows")
        chart.emptyText = "no notification rows in this period"
        return chart
    }
}
