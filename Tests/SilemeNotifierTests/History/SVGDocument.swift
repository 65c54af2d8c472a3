import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An `<svg>` element parsed with Foundation's XML parser, reduced to what the chart tests check:
/// the plot rectangle and each bar (`<g class="bar">`) with its attributes, tooltip and segments.
struct SVGDocument {
    /// One `<g class="bar">`.
    struct Bar {
        var attributes: [String: String]
        var title = ""
        var segments: [[String: String]] = []
    }

    var root: [String: String] = [:]
    var plot: [String: String] = [:]
    var bars: [Bar] = []
    var texts: [String] = []

    /// Parses `svg` (one well-formed `<svg>` element); nil when it is not well-formed XML.
    init?(_ svg: String) {
        let delegate = Delegate()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = delegate
        guard parser.parse() else { return nil }
        self = delegate.document
    }

    /// Every `<svg …>…</svg>` in an HTML page, in order.
    static func all(in html: String) -> [String] {
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
