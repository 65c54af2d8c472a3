import Foundation
import Output

/// A bar chart drawn as inline SVG by the project's own code (no library, no script): one bar per
/// category with its series stacked bottom-up, a value axis with round ticks and grid lines,
/// category labels (thinned out when there are many), axis titles and a legend.
///
/// Geometry is exact and checkable: every segment's height is `value × plotHeight / scale.maximum`
/// (one scale for the whole chart; zero is zero height), and its bottom sits on the segment below
/// or on the baseline. Each bar is a `<g class="bar">` carrying its own `data-*` attributes and a
/// `<title>` (a tooltip); each segment is a `<rect class="segment">` with `data-series` and
/// `data-value`. The plot area is a `<rect class="plot">` of its own colour, so that a screenshot
/// can find it.
package struct SVGBarChart {
    /// One stacked series: its key (CSS class and `data-series`), legend label and colour.
    package struct Series {
        package let key: String
        package let label: String
        package let color: String
    }

    /// One bar: its axis label, one value per series, its `data-*` attributes and tooltip.
    package struct Bar {
        package let label: String
        package let values: [Int]
        package let attributes: [(String, String)]
        package let title: String
    }

    /// The `id` of the `<svg>`.
    package let id: String
    /// The accessible title of the chart.
    package let title: String
    /// The series, bottom first.
    package let series: [Series]
    /// The bars, left to right.
    package let bars: [Bar]
    /// The category axis title.
    package let xTitle: String
    /// The value axis title.
    package let yTitle: String
    /// Shown in the plot when there are no bars.
    package var emptyText = "no data"

    /// Size of the drawing, in SVG user units (CSS pixels at 100%).
    package static let width = 960.0
    package static let height = 320.0
    /// The plot area.
    package static let plotX = 64.0
    package static let plotY = 44.0
    package static let plotWidth = width - plotX - 20
    package static let plotHeight = height - plotY - 64
    /// The plot area's background, which nothing else on the page uses.
    package static let plotColor = "#f4f7fb"

    /// The value axis.
    package var scale: ChartScale { ChartScale(largest: bars.map { $0.values.reduce(0, +) }.max() ?? 0) }

    /// Height of one unit of value.
    package var unit: Double { Self.plotHeight / Double(scale.maximum) }

    /// The chart as an `<svg>` element.
    package func render() -> String {
        let baseline = Self.plotY + Self.plotHeight
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"\(id)\" class=\"chart\" "
            + "viewBox=\"0 0 \(Self.n(Self.width)) \(Self.n(Self.height))\" width=\"\(Self.n(Self.width))\" "
            + "height=\"\(Self.n(Self.height))\" role=\"img\" aria-labelledby=\"\(id)-title\" font-size=\"12\">\n"
        svg += "<title id=\"\(id)-title\">\(Escaping.html(title))</title>\n"
        svg += "<rect class=\"plot\" x=\"\(Self.n(Self.plotX))\" y=\"\(Self.n(Self.plotY))\" width=\"\(Self.n(Self.plotWidth))\" "
            + "height=\"\(Self.n(Self.plotHeight))\" fill=\"\(Self.plotColor)\"/>\n"

        // Value axis: grid lines and tick labels.
        svg += "<g class=\"y-axis\" fill=\"#444\" text-anchor=\"end\">\n"
        for tick in scale.ticks {
            let y = baseline - Double(tick) * unit
            if tick > 0 {
                svg += "<line x1=\"\(Self.n(Self.plotX))\" y1=\"\(Self.n(y))\" x2=\"\(Self.n(Self.plotX + Self.plotWidth))\" "
                    + "y2=\"\(Self.n(y))\" stroke=\"#d5dce5\" stroke-width=\"1\"/>"
            }
            svg += "<text x=\"\(Self.n(Self.plotX - 8))\" y=\"\(Self.n(y + 4))\">\(tick)</text>\n"
        }
        svg += "</g>\n"

        // Bars.
        let slot = bars.isEmpty ? Self.plotWidth : Self.plotWidth / Double(bars.count)
        let barWidth = max(1, min(slot * 0.7, 48))
        svg += "<g class=\"bars\" shape-rendering=\"crispEdges\">\n"
        for (index, bar) in bars.enumerated() {
            let x = Self.plotX + Double(index) * slot + (slot - barWidth) / 2
            let attributes = bar.attributes.map { " \($0.0)=\"\(Escaping.html($0.1))\"" }.joined()
            svg += "<g class=\"bar\"\(attributes)><title>\(Escaping.html(bar.title))</title>"
            var bottom = baseline
            for (series, value) in zip(series, bar.values) {
                let height = Double(value) * unit
                svg += "<rect class=\"segment \(series.key)\" data-series=\"\(series.key)\" data-value=\"\(value)\" "
                    + "x=\"\(Self.n(x))\" y=\"\(Self.n(bottom - height))\" width=\"\(Self.n(barWidth))\" "
                    + "height=\"\(Self.n(height))\" fill=\"\(series.color)\"/>"
                bottom -= height
            }
            svg += "</g>\n"
        }
        svg += "</g>\n"
        if bars.isEmpty {
            svg += "<text x=\"\(Self.n(Self.plotX + Self.plotWidth / 2))\" y=\"\(Self.n(Self.plotY + Self.plotHeight / 2))\" "
                + "text-anchor=\"middle\" fill=\"#666\">\(Escaping.html(emptyText))</text>\n"
        }

        // Category labels, at most about one per 48 units so that they never overlap.
        let every = max(1, Int((Double(bars.count) / (Self.plotWidth / 48)).rounded(.up)))
        svg += "<g class=\"x-axis\" fill=\"#444\" text-anchor=\"middle\">\n"
        for (index, bar) in bars.enumerated() where index % every == 0 {
            let x = Self.plotX + (Double(index) + 0.5) * slot
            svg += "<text x=\"\(Self.n(x))\" y=\"\(Self.n(baseline + 18))\">\(Escaping.html(bar.label))</text>\n"
        }
        svg += "</g>\n"

        // Axes, their titles, and the legend.
        svg += "<line class=\"axis\" x1=\"\(Self.n(Self.plotX))\" y1=\"\(Self.n(baseline))\" "
            + "x2=\"\(Self.n(Self.plotX + Self.plotWidth))\" y2=\"\(Self.n(baseline))\" stroke=\"#444\" stroke-width=\"1\"/>\n"
        svg += "<line class=\"axis\" x1=\"\(Self.n(Self.plotX))\" y1=\"\(Self.n(Self.plotY))\" x2=\"\(Self.n(Self.plotX))\" "
            + "y2=\"\(Self.n(baseline))\" stroke=\"#444\" stroke-width=\"1\"/>\n"
        svg += "<text class=\"axis-title\" x=\"\(Self.n(Self.plotX + Self.plotWidth / 2))\" y=\"\(Self.n(Self.height - 14))\" "
            + "text-anchor=\"middle\" fill=\"#222\">\(Escaping.html(xTitle))</text>\n"
        svg += "<text class=\"axis-title\" transform=\"translate(16 \(Self.n(Self.plotY + Self.plotHeight / 2))) rotate(-90)\" "
            + "text-anchor=\"middle\" fill=\"#222\">\(Escaping.html(yTitle))</text>\n"
        svg += "<g class=\"legend\">\n"
        var legendX = Self.plotX
        for item in series {
            svg += "<rect x=\"\(Self.n(legendX))\" y=\"14\" width=\"12\" height=\"12\" fill=\"\(item.color)\"/>"
                + "<text x=\"\(Self.n(legendX + 18))\" y=\"24\" fill=\"#222\">\(Escaping.html(item.label))</text>\n"
            legendX += 18 + Double(DisplayWidth.of(item.label)) * 7 + 28
        }
        svg += "</g>\n</svg>"
        return svg
    }

    /// A coordinate with at most two decimals and no trailing zeros (`12`, `12.5`, `12.25`).
    package static func n(_ value: Double) -> String {
        var text = String(format: "%.2f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
