import Foundation
import Testing
import TestSupport
@testable import Reports

/// The SVG bar chart's geometry (one scale, zero is zero, stacked on the baseline), axis and escaping.
@Suite("SVG bar charts")
struct SVGBarChartTests {
    static func chart(_ values: [[Int]]) -> SVGBarChart {
        SVGBarChart(
            id: "c", title: "test <chart>",
            series: [.init(key: "sent", label: "sent", color: "#2e7d32"), .init(key: "failed", label: "failed", color: "#c62828")],
            bars: values.enumerated().map { index, v in
                .init(label: "d\(index)", values: v, attributes: [("data-i", String(index)), ("data-name", "<&\"'>")],
                      title: "bar \(index) <b>")
            },
            xTitle: "day", yTitle: "mails")
    }

    @Test("every segment's height is its value on one scale; zero is zero height; segments stack on the baseline",
          arguments: [[[12, 2], [0, 0], [3, 0], [0, 5], [7, 7]], [[1, 0]], [[0, 0], [0, 0]], [[100_000, 31_234], [99_999, 1]]])
    func geometry(values: [[Int]]) throws {
        let chart = Self.chart(values)
        let svg = try #require(SVGDocument(chart.render()))
        #expect(svg.bars.count == values.count)
        let plotY = try #require(Double(svg.plot["y"] ?? ""))
        let plotHeight = try #require(Double(svg.plot["height"] ?? ""))
        let baseline = plotY + plotHeight
        let largest = values.map { $0.reduce(0, +) }.max() ?? 0
        let unit = plotHeight / Double(chart.scale.maximum)
        #expect(chart.scale.maximum >= largest)
        for (bar, expected) in zip(svg.bars, values) {
            #expect(bar.segments.count == 2)
            var bottom = baseline
            for (segment, value) in zip(bar.segments, expected) {
                let height = try #require(Double(segment["height"] ?? ""))
                let y = try #require(Double(segment["y"] ?? ""))
                #expect(segment["data-value"] == String(value))
                #expect(abs(height - Double(value) * unit) <= 0.01)
                if value == 0 { #expect(height == 0) }
                #expect(abs(y + height - bottom) <= 0.02)
                bottom = y
            }
        }
        // The same scale across bars: height / value is one number.
        // (Segments under 5 units are left out: their two-decimal rounding dominates the ratio.)
        let ratios = svg.bars.flatMap(\.segments).compactMap { s -> Double? in
            guard let v = Double(s["data-value"] ?? ""), let h = Double(s["height"] ?? ""), h >= 5 else { return nil }
            return h / v
        }
        if let first = ratios.first { #expect(ratios.allSatisfy { abs($0 - first) / first < 0.002 }) }
    }

    @Test("the tallest bar reaches at most the top of the plot; the axis ticks are round")
    func scale() throws {
        let chart = Self.chart([[12, 2], [3, 0]])
        #expect(chart.scale == ChartScale(largest: 14))
        #expect(chart.scale.ticks == [0, 5, 10, 15])
        let svg = try #require(SVGDocument(chart.render()))
        let top = try #require(svg.bars[0].segments.last.flatMap { Double($0["y"] ?? "") })
        #expect(top >= Double(svg.plot["y"]!)!)
        for label in ["0", "5", "10", "15", "day", "mails", "sent", "failed", "d0", "d1"] { #expect(svg.texts.contains(label)) }
    }

    @Test("attributes, titles and labels are escaped; the SVG stays well-formed")
    func escaping() throws {
        let rendered = Self.chart([[1, 1]]).render()
        #expect(!rendered.contains("<b>"))
        #expect(rendered.contains("data-name=\"&lt;&amp;&quot;&#39;&gt;\""))
        let svg = try #require(SVGDocument(rendered))
        #expect(svg.bars[0].attributes["data-name"] == "<&\"'>")
        #expect(svg.bars[0].title == "bar 0 <b>")
        #expect(svg.root["viewBox"] == "0 0 960 320")
    }

    @Test("many bars get thinned labels and keep a positive width; no bars say so")
    func manyAndNone() throws {
        let many = try #require(SVGDocument(Self.chart(Array(repeating: [1, 1], count: 366)).render()))
        #expect(many.bars.count == 366)
        #expect(many.bars.allSatisfy { Double($0.segments[0]["width"]!)! >= 1 })
        #expect(many.texts.filter { $0.hasPrefix("d") && Int($0.dropFirst()) != nil }.count <= 19)
        var empty = Self.chart([])
        empty.emptyText = "nothing here"
        let none = try #require(SVGDocument(empty.render()))
        #expect(none.bars.isEmpty)
        #expect(none.texts.contains("nothing here"))
    }

    @Test("round axis maxima", arguments: [(0, 1, 1), (1, 1, 1), (3, 3, 1), (7, 8, 2), (12, 15, 5), (14, 15, 5),
                                            (99, 100, 20), (100_001, 150_000, 50_000)])
    func chartScale(largest: Int, maximum: Int, step: Int) {
        let scale = ChartScale(largest: largest)
        #expect(scale.maximum == maximum)
        #expect(scale.step == step)
        #expect(scale.maximum >= largest)
    }

    @Test("coordinates have at most two decimals", arguments: [(12.0, "12"), (12.5, "12.5"), (0.126, "0.13"), (-0.001, "0"), (216.666, "216.67")])
    func numbers(value: Double, text: String) {
        #expect(SVGBarChart.n(value) == text)
    }
}
