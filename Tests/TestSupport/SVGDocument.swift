import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An `<svg>` chart of the HTML report parsed with Foundation's XML parser, reduced to what the
/// chart tests (unit and integration) check: the plot rectangle and each bar (`<g class="bar">`)
/// with its `data-*` attributes, tooltip (`<title>`) and segments (`<rect class="segment">`).
public struct SVGDocument: Sendable {
    /// One `<g class="bar">`.
    public struct Bar: Sendable {
        public var attributes: [String: String]
        public var title = ""
        public var segments: [[String: String]] = []

        /// The segment of `series` (`sent`, `failed`, `not-sent`).
        public func segment(_ series: String) -> [String: String]? { segments.first { $0["data-series"] == series } }
        /// A number of a segment's attribute.
        public func number(_ series: String, _ attribute: String) -> Double? { segment(series).flatMap { Double($0[attribute] ?? "") } }
    }

    public var root: [String: String] = [:]
    public var plot: [String: String] = [:]
    public var bars: [Bar] = []
    public var texts: [String] = []

    /// A number of the plot rectangle (`x`, `y`, `width`, `height`).
    public func plotNumber(_ attribute: String) -> Double? { plot[attribute].flatMap(Double.init) }

    /// Every chart of an HTML page, parsed; throws when one is not well-formed XML.
    public static func charts(in html: String) throws -> [SVGDocument] {
        try all(in: html).map { svg in
            guard let document = SVGDocument(svg) else { throw SVGError() }
            return document
        }
    }

    /// An `<svg>` of the page that is not well-formed XML.
    public struct SVGError: Error, CustomStringConvertible {
        public var description: String { "an <svg> of the report is not well-formed XML" }
    }

    /// Parses `svg` (one well-formed `<svg>` element); nil when it is not well-formed XML.
    public init?(_ svg: String) {
        let delegate = Delegate()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = delegate
        guard parser.parse() else { return nil }
        self = delegate.document
    }

    /// Every `<svg …>…</svg>` in an HTML page, in order.
    public static func all(in html: String) -> [String] {
        var result: [String] = []
        var rest = html[...]
        while let start = rest.range(of: "<svg"), let end = rest.range(of: "</svg>", range: start.upperBound..<rest.endIndex) {
            result.append(String(rest[start.lowerBound..<end.upperBound]))
            rest = rest[end.upperBound...]
        }
        return result
    }

    /// Collects the parts of the chart as the parser reports them.
    private final class Delegate: NSObject, XMLParserDelegate {
        var document = SVGDocument(empty: ())
        private var stack: [String] = []
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            stack.append(name)
            text = ""
            switch name {
            case "svg": document.root = attributes
            case "rect" where attributes["class"] == "plot": document.plot = attributes
            case "g" where attributes["class"] == "bar": document.bars.append(Bar(attributes: attributes))
            case "rect" where stack.dropLast().last == "g" && attributes["class"]?.hasPrefix("segment") == true:
                document.bars[document.bars.count - 1].segments.append(attributes)
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "title", stack.dropLast().last == "g", !document.bars.isEmpty {
                document.bars[document.bars.count - 1].title = text
            }
            if name == "text" { document.texts.append(text) }
            stack.removeLast()
        }
    }

    private init(empty: Void) {}
}
