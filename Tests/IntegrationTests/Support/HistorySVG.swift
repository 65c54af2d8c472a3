import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An `<svg>` chart of the HTML report parsed with Foundation's XML parser: its plot rectangle and
/// its bars (`<g class="bar">` with `data-*` attributes, a `<title>`, and `<rect class="segment">`s).
struct HistorySVG {
    /// One bar.
    struct Bar {
        var attributes: [String: String]
        var title = ""
        var segments: [[String: String]] = []

        /// The segment of `series` (`sent`, `failed`, `not-sent`).
        func segment(_ series: String) -> [String: String]? { segments.first { $0["data-series"] == series } }
        /// A number of a segment's attribute.
        func number(_ series: String, _ attribute: String) -> Double? { segment(series).flatMap { Double($0[attribute] ?? "") } }
    }

    var root: [String: String] = [:]
    var plot: [String: Double] = [:]
    var bars: [Bar] = []

    /// Every chart of `html`, parsed; throws when one is not well-formed XML.
    static func charts(in html: String) throws -> [HistorySVG] {
        var result: [HistorySVG] = []
        var rest = html[...]
        while let start = rest.range(of: "<svg"), let end = rest.range(of: "</svg>", range: start.upperBound..<rest.endIndex) {
            let delegate = Delegate()
            let parser = XMLParser(data: Data(rest[start.lowerBound..<end.upperBound].utf8))
            parser.delegate = delegate
            guard parser.parse() else { throw TestFailure("an <svg> of the report is not well-formed XML") }
            result.append(delegate.svg)
            rest = rest[end.upperBound...]
        }
        return result
    }

    /// Collects the parts of the chart as the parser reports them.
    private final class Delegate: NSObject, XMLParserDelegate {
        var svg = HistorySVG()
        private var stack: [String] = []
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            stack.append(name)
            text = ""
            if name == "svg" { svg.root = attributes }
            if name == "rect", attributes["class"] == "plot" {
                for key in ["x", "y", "width", "height"] { svg.plot[key] = Double(attributes[key] ?? "") }
            }
            if name == "g", attributes["class"] == "bar" { svg.bars.append(Bar(attributes: attributes)) }
            if name == "rect", attributes["class"]?.hasPrefix("segment") == true, !svg.bars.isEmpty {
                svg.bars[svg.bars.count - 1].segments.append(attributes)
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "title", stack.dropLast().last == "g", !svg.bars.isEmpty { svg.bars[svg.bars.count - 1].title = text }
            stack.removeLast()
        }
    }
}
