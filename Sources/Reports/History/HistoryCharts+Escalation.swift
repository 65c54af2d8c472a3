import Values

extension HistoryCharts {
    /// Colours of the escalation charts (none of the other charts', so a screenshot tells them apart).
    package static let medianColor = "#6a1b9a"
    package static let p90Color = "#ce93d8"
    package static let escalatedColor = "#ef6c00"
    package static let unheardColor = "#4e342e"

    /// The unit the time-to-acknowledgement chart counts in, for a largest delay of `seconds`:
    /// seconds below 10 minutes, minutes below two days, else hours — so that bars are whole
    /// numbers that still differ.
    package static func delayUnit(largestSeconds seconds: Double) -> (seconds: Double, name: String) {
        seconds < 600 ? (1, "seconds") : seconds < 48 * 3600 ? (60, "minutes") : (3600, "hours")
    }

    /// The time from the first alert to the first acknowledgement per alert date: one bar per day
    /// of the period, the median below and the rest of the way to the 90th percentile above (so the
    /// bar's top is the 90th percentile), in `delayUnit`s rounded; empty for a day with no
    /// acknowledgement. Each bar has `data-day`, `data-acknowledged`, `data-median-seconds`,
    /// `data-p90-seconds` (exact; empty without acknowledgements).
    package static func timeToAcknowledgement(_ overview: HistoryOverview) -> SVGBarChart {
        let largest = overview.escalation.compactMap { $0.timeToAcknowledgement?.p90 }.max() ?? 0
        let unit = delayUnit(largestSeconds: largest)
        let bars = overview.escalation.map { day in
            let time = day.timeToAcknowledgement
            let median = time.map { Int(($0.median / unit.seconds).rounded()) } ?? 0
            let p90 = time.map { Int(($0.p90 / unit.seconds).rounded()) } ?? 0
            let seconds = { (value: Double?) in value.map { String(Int($0.rounded())) } ?? "" }
            return SVGBarChart.Bar(
                label: label(day.date), values: [median, p90 - median],
                attributes: [("data-day", day.date.description), ("data-acknowledged", String(day.acknowledged)),
                             ("data-median-seconds", seconds(time?.median)), ("data-p90-seconds", seconds(time?.p90))],
                title: "\(day.date): " + (time.map {
                    "\(day.acknowledged) acknowledged; median \(DelaySummary.clock($0.median)), 90th percentile \(DelaySummary.clock($0.p90))"
                } ?? "no acknowledgement"))
        }
        var chart = SVGBarChart(
            id: "chart-acknowledgement", title: "Time from the first alert to the first acknowledgement",
            series: [.init(key: "median", label: "median", color: medianColor),
                     .init(key: "p90", label: "up to the 90th percentile", color: p90Color)],
            bars: bars, xTitle: "alert date", yTitle: unit.name)
        chart.emptyText = "no days in this period"
        return chart
    }

    /// Escalations per alert date: one bar per day, the streaks escalated and not (yet) declared unheard below and
    /// those declared unheard above (the bar's top is every escalation), with `data-day`,
    /// `data-escalated`, `data-unheard`, `data-outcome-ok`, `data-outcome-unreachable`.
    package static func escalations(_ overview: HistoryOverview) -> SVGBarChart {
        let bars = overview.escalation.map { day in
            SVGBarChart.Bar(
                label: label(day.date), values: [max(0, day.escalated - day.unheard), day.unheard],
                attributes: [("data-day", day.date.description), ("data-escalated", String(day.escalated)),
                             ("data-unheard", String(day.unheard)), ("data-outcome-ok", String(day.outcomeOK)),
                             ("data-outcome-unreachable", String(day.outcomeUnreachable))],
                title: "\(day.date): \(day.alerted) alerted, \(day.escalated) escalated, \(day.unheard) unheard; "
                    + "\(day.outcomeOK) reported OK, \(day.outcomeUnreachable) could not be reached")
        }
        var chart = SVGBarChart(
            id: "chart-escalations", title: "Escalations and unheard alerts per day",
            series: [.init(key: "escalated", label: "escalated, not (yet) unheard", color: escalatedColor),
                     .init(key: "unheard", label: "unheard", color: unheardColor)],
            bars: bars, xTitle: "alert date", yTitle: "streaks")
        chart.emptyText = "no days in this period"
        return chart
    }

    /// `01-13`: a day as the charts label it.
    static func label(_ date: CalendarDate) -> String {
        let (_, month, day) = date.components
        return (month < 10 ? "0" : "") + "\(month)-" + (day < 10 ? "0" : "") + "\(day)"
    }
}
