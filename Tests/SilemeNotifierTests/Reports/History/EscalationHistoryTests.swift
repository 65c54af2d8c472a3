import Foundation
import Testing
import TestSupport
@testable import Values
@testable import Output
@testable import Reports

/// Escalation in the history report, its pure parts: the median and 90th percentile of the
/// delays to the first acknowledgement, the period's totals, and each format's figures and charts
/// for a made-up period of three alert dates.
@Suite("History report: escalation")
struct EscalationHistoryTests {
    typealias F = HistoryFixtures

    // MARK: Median and 90th percentile

    @Test("no delay: no summary")
    func none() {
        #expect(DelaySummary([]) == nil)
        #expect(DelaySummary.percentile(0.5, ofSorted: []) == nil)
    }

    @Test("one delay is its own median and 90th percentile")
    func one() throws {
        let summary = try #require(DelaySummary([600]))
        #expect(summary.count == 1)
        #expect(summary.median == 600)
        #expect(summary.p90 == 600)
    }

    @Test("an odd count: the middle value; the 90th percentile between the two highest ranks")
    func odd() throws {
        // Given out of order: sorted, 60 120 300 900 3600; rank 0.9 × 4 = 3.6 → 900 + 0.6 × 2700.
        let summary = try #require(DelaySummary([3600, 60, 900, 300, 120]))
        #expect(summary.median == 300)
        #expect(summary.p90 == 2520)
    }

    @Test("an even count: the mean of the two middle values; the 90th percentile interpolated")
    func even() throws {
        // 600 1800 3600 7200: median (1800 + 3600) / 2; rank 0.9 × 3 = 2.7 → 3600 + 0.7 × 3600.
        let summary = try #require(DelaySummary([7200, 600, 3600, 1800]))
        #expect(summary.median == 2700)
        #expect(abs(summary.p90 - 6120) < 1e-9)
        #expect(try #require(DelaySummary([10, 20])).median == 15)
    }

    @Test("the percentiles of ten values from 1 to 10, and equal values")
    func ranks() {
        let values = (1...10).map(Double.init)
        #expect(DelaySummary.percentile(0, ofSorted: values) == 1)
        #expect(DelaySummary.percentile(1, ofSorted: values) == 10)
        #expect(abs(DelaySummary.percentile(0.9, ofSorted: values)! - 9.1) < 1e-9)
        #expect(DelaySummary([5, 5, 5]).map { [$0.median, $0.p90] } == [5, 5])
    }

    @Test("delays print as h:mm:ss, rounded to the second, hours past 24")
    func clock() {
        #expect(DelaySummary.clock(0) == "0:00:00")
        #expect(DelaySummary.clock(59.6) == "0:01:00")
        #expect(DelaySummary.clock(2520) == "0:42:00")
        #expect(DelaySummary.clock(93_784) == "26:03:04")
    }

    // MARK: Totals

    static var days: [EscalationDay] {
        var d1 = EscalationDay(date: F.date("2026-01-11"))
        d1.alerted = 4; d1.delays = [600, 1800, 3600]; d1.escalated = 1; d1.outcomeOK = 1
        let d2 = EscalationDay(date: F.date("2026-01-12"))
        var d3 = EscalationDay(date: F.date("2026-01-13"))
        d3.alerted = 3; d3.delays = [300]; d3.escalated = 2; d3.unheard = 1; d3.outcomeUnreachable = 1
        return [d1, d2, d3]
    }

    @Test("the totals: counts summed, the period's median over every acknowledged streak (not a median of medians)")
    func totals() throws {
        let total = EscalationDay.totals(Self.days)
        #expect(total.date == F.date("2026-01-11"))
        let counts: [Int] = [total.alerted, total.acknowledged, total.escalated, total.unheard, total.outcomeOK, total.outcomeUnreachable]
        #expect(counts == [7, 4, 3, 1, 1, 1])
        #expect(total.delays == [300, 600, 1800, 3600])
        #expect(try #require(total.timeToAcknowledgement).median == 1200)
        #expect(Self.days[1].isEmpty && Self.days[1].timeToAcknowledgement == nil)
        #expect(EscalationDay.totals([]).isEmpty)
    }

    // MARK: The formats

    static var overview: HistoryOverview {
        var overview = F.overview
        overview.escalation = days
        return overview
    }

    static func feed(_ sink: any HistorySink) throws {
        try sink.begin(F.header(), overview: overview)
        for section in [HistorySection.runs, .problems] {
            try sink.beginSection(section)
            try sink.endSection(section)
        }
        try sink.end()
    }

    @Test("JSON: every day with its figures, null times without acknowledgements, and the totals")
    func json() throws {
        let text = try F.render(.json) { try Self.feed($0) }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let escalation = try #require(object["escalation"] as? [String: Any])
        let days = try #require(escalation["days"] as? [[String: Any]])
        #expect(days.map { $0["date"] as? String } == ["2026-01-11", "2026-01-12", "2026-01-13"])
        #expect(days[0]["ack_median_seconds"] as? Int == 1800)
        #expect(days[0]["ack_p90_seconds"] as? Int == 3240)
        #expect(days[1]["ack_median_seconds"] is NSNull)
        #expect(days[2]["unheard"] as? Int == 1)
        #expect(days[2]["outcome_unreachable"] as? Int == 1)
        let totals = try #require(escalation["totals"] as? [String: Any])
        #expect(totals["date"] == nil)
        #expect(["alerted", "acknowledged", "ack_median_seconds", "ack_p90_seconds", "escalated", "unheard", "outcome_ok",
                 "outcome_unreachable"].map { totals[$0] as? Int } == [7, 4, 1200, 3060, 3, 1, 1, 1])
    }

    @Test("CSV: one escalation_day record per day with streaks, and escalation_total")
    func csv() throws {
        let rows = CSVText.rows(try F.render(.csv) { try Self.feed($0) })
        let header = rows[0]
        #expect(rows.allSatisfy { $0.count == header.count })
        let records = rows.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        let days = records.filter { $0["record"] == "escalation_day" }
        #expect(days.map { $0["date"] } == ["2026-01-11", "2026-01-13"])
        #expect(days.map { $0["ack_median_seconds"] } == ["1800", "300"])
        #expect(days.map { $0["escalated"] } == ["1", "2"])
        let total = try #require(records.first { $0["record"] == "escalation_total" })
        #expect([total["alerted"], total["acknowledged"], total["ack_median_seconds"], total["ack_p90_seconds"], total["unheard"]]
                == ["7", "4", "1200", "3060", "1"])
        // No streak alerted: no escalation record.
        let quiet = CSVText.rows(try F.render(.csv) { try F.feedDays($0) })
        #expect(!quiet.contains { $0.first?.hasPrefix("escalation") == true })
    }

    @Test("table: the days with streaks and the total, in 80 columns, times as h:mm:ss")
    func table() throws {
        let text = try F.render(.table) { try Self.feed($0) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 80 }, "\(lines.filter { DisplayWidth.of($0) > 80 })")
        let title = try #require(lines.firstIndex { $0.hasPrefix("DATE") && $0.contains("UNHEARD") })
        #expect(lines[title + 1] == "2026-01-11        4      3   0:30:00   0:54:00      1        0    1        0")
        #expect(lines[title + 2] == "2026-01-13        3      1   0:05:00   0:05:00      2        1    0        1")
        #expect(lines[title + 3] == "TOTAL             7      4   0:20:00   0:51:00      3        1    1        1")
        #expect(!(try F.render(.table) { try F.feedDays($0) }).contains("Escalation"))
    }

    @Test("HTML: the figures, a table, and two charts whose bars are the day's numbers in proportion")
    func html() throws {
        let page = try F.render(.html) { try Self.feed($0) }
        #expect(page.contains("<section id=\"escalation\">"))
        #expect(page.contains("<dt>Time to acknowledge (median)</dt><dd>0:20:00</dd>"))
        #expect(page.contains("<tr data-day=\"2026-01-13\" class=\"warn\">"))
        let svgs = SVGDocument.all(in: page).compactMap(SVGDocument.init)
        #expect(svgs.map { $0.root["id"] } == ["chart-mails", "chart-miss-days", "chart-acknowledgement", "chart-escalations"])
        let time = svgs[2], steps = svgs[3]
        // The longest 90th percentile is 54 minutes: the chart counts minutes.
        #expect(time.texts.contains("minutes"))
        #expect(time.bars.map { $0.attributes["data-median-seconds"] } == ["1800", "", "300"])
        #expect(time.bars.map { $0.attributes["data-p90-seconds"] } == ["3240", "", "300"])
        #expect(time.bars.map { $0.segments.map { $0["data-value"]! } } == [["30", "24"], ["0", "0"], ["5", "0"]])
        #expect(steps.bars.map { $0.attributes["data-escalated"] } == ["1", "0", "2"])
        #expect(steps.bars.map { $0.segments.map { $0["data-value"]! } } == [["1", "0"], ["0", "0"], ["1", "1"]])
        for svg in [time, steps] {
            let unit = Double(svg.plot["height"]!)! / Double(svg.texts.compactMap(Int.init).max()!)
            for bar in svg.bars {
                let total = bar.segments.map { Double($0["height"]!)! }.reduce(0, +)
                let value = bar.segments.map { Double($0["data-value"]!)! }.reduce(0, +)
                #expect(abs(total - value * unit) < 0.03)
            }
        }
        // No streak alerted: the page has its two charts only.
        let quiet = try F.render(.html) { try F.feedDays($0) }
        #expect(!quiet.contains("id=\"escalation\""))
    }

    @Test("the chart's unit follows the longest delay: seconds, minutes, hours")
    func units() {
        #expect(HistoryCharts.delayUnit(largestSeconds: 45).name == "seconds")
        #expect(HistoryCharts.delayUnit(largestSeconds: 600).name == "minutes")
        #expect(HistoryCharts.delayUnit(largestSeconds: 47 * 3600).name == "minutes")
        #expect(HistoryCharts.delayUnit(largestSeconds: 48 * 3600).name == "hours")
    }
}
