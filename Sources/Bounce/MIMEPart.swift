/// One MIME entity of a mail message, read from its raw bytes: its header fields, its body as
/// it was sent (still transfer-encoded), and for a multipart its parts.
///
/// A small reader written for bounce reports, which arrive from every kind of MTA: CRLF or bare
/// LF line ends, folded header lines, nested multiparts, quoted-printable and base64 bodies,
/// boundaries quoted or not, a missing closing boundary. It never throws: what it cannot make
/// sense of is a part with no header fields or no parts, and the report reader then calls the
/// message unparsed. Work is bounded by the input (the caller limits its size) and by
/// `maximumDepth` and `maximumParts`, so a hostile message cannot make it recurse or allocate
/// without end. An enclosed message (`message/rfc822`) keeps its bytes, and only its header fields
/// are read, when asked: a returned message is another system's mail, and nothing in it may pass
/// for the report.
package struct MIMEPart: Sendable {
    /// The header fields in order, names as written.
    package let fields: MIMEFields
    /// The body as sent: for a multipart the whole body, preamble to epilogue.
    package let body: ArraySlice<UInt8>
    /// The parts of a multipart; empty for any other type.
    package private(set) var parts: [MIMEPart]
    /// The `Content-Type`, read once.
    package let contentType: MIMEFields.ContentType
    /// The media type, lower-cased (`text/plain` when the part names none, as RFC 2045 says).
    package let mediaType: String

    /// Nested multiparts read at most.
    static let maximumDepth = 12
    /// Parts read at most in one message (all levels).
    static let maximumParts = 500

    /// Reads `bytes` as one message (header fields, a blank line, the body).
    package init(message bytes: ArraySlice<UInt8>) {
        var budget = Self.maximumParts
        self.init(bytes, depth: 0, budget: &budget)
    }

    private init(_ bytes: ArraySlice<UInt8>, depth: Int, budget: inout Int) {
        let (fields, bodyStart) = MIMEFields.read(bytes)
        self.fields = fields
        body = bytes[bodyStart...]
        parts = []
        contentType = fields.contentType
        mediaType = contentType.mediaType
        guard contentType.type == "multipart", depth < Self.maximumDepth, let boundary = contentType.parameters["boundary"], !boundary.isEmpty else { return }
        for range in Self.split(body, boundary: Array(boundary.utf8)) {
            guard budget > 0 else { break }
            budget -= 1
            parts.append(MIMEPart(body[range], depth: depth + 1, budget: &budget))
        }
    }

    /// The body with its transfer encoding undone (base64, quoted-printable; anything else as is).
    package var decodedBody: [UInt8] {
        switch fields["content-transfer-encoding"]?.trimmed.lowercased() {
        case "base64": TransferEncoding.base64(body)
        case "quoted-printable": TransferEncoding.quotedPrintable(body)
        default: Array(body)
        }
    }

    /// The header fields of the enclosed message of a `message/rfc822` part, or of a
    /// `text/rfc822-headers` part; nil for any other part. Only the fields are read: the returned
    /// message's body is another system's mail and never needed.
    package var enclosedFields: MIMEFields? {
        guard mediaType == "message/rfc822" || mediaType == "text/rfc822-headers" || mediaType == "message/global" else { return nil }
        switch fields["content-transfer-encoding"]?.trimmed.lowercased() {
        case "base64", "quoted-printable": return MIMEFields.read(decodedBody[...]).0
        default: return MIMEFields.read(body).0
        }
    }

    /// Every part of this tree, depth first, itself first; an enclosed message is one part (its
    /// own parts are not visited).
    package var allParts: [MIMEPart] { [self] + parts.flatMap(\.allParts) }

    /// The ranges of `body` between the delimiter lines `--boundary` (RFC 2046 §5.1.1): the line
    /// break before a delimiter belongs to it, the preamble and the epilogue are dropped, and a
    /// missing closing delimiter ends the last part at the end of the body.
    static func split(_ body: ArraySlice<UInt8>, boundary: [UInt8]) -> [Range<Int>] {
        let delimiter: [UInt8] = [0x2D, 0x2D] + boundary
        var ranges: [Range<Int>] = []
        var partStart: Int?
        var lineStart = body.startIndex
        while lineStart < body.endIndex {
            let lineEnd = body[lineStart...].firstIndex(of: 0x0A) ?? body.endIndex
            var content = body[lineStart..<lineEnd]
            if content.last == 0x0D { content.removeLast() }
            if content.starts(with: delimiter) {
                var rest = content.dropFirst(delimiter.count)
                let closing = rest.starts(with: [0x2D, 0x2D])
                if closing { rest = rest.dropFirst(2) }
                if rest.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                    if let start = partStart { ranges.append(start..<Self.endBeforeBreak(body, lineStart: lineStart, after: start)) }
                    if closing { return ranges }
                    partStart = min(lineEnd + 1, body.endIndex)
                }
            }
            lineStart = lineEnd + 1
        }
        if let start = partStart, start < body.endIndex { ranges.append(start..<body.endIndex) }
        return ranges
    }

    /// Where a part ends: before the CRLF or LF that precedes the delimiter line at `lineStart`.
    private static func endBeforeBreak(_ body: ArraySlice<UInt8>, lineStart: Int, after start: Int) -> Int {
        var end = lineStart
        if end > start, body[end - 1] == 0x0A { end -= 1 }
        if end > start, body[end - 1] == 0x0D { end -= 1 }
        return end
    }
}
