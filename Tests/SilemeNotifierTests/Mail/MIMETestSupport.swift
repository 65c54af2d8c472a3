import Foundation

/// Small decoders the mail tests use to read back what the encoders produced.
enum MIMETestSupport {
    /// Removes folds (CRLF before whitespace), as RFC 5322 unfolding does.
    static func unfold(_ value: String) -> String {
        value.replacingOccurrences(of: "\r\n", with: "")
    }

    /// Decodes an unstructured value (leading whitespace ignored) made of `=?UTF-8?B?…?=` words and plain words: whitespace
    /// between two encoded words is dropped, other whitespace kept as one space. Nil when an encoded
    /// word is malformed or not valid UTF-8.
    static func decodeWords(_ value: String) -> String? {
        var result = ""
        var previousWasEncoded = false
        for (index, token) in unfold(value).drop(while: { $0 == " " }).split(separator: " ", omittingEmptySubsequences: false).enumerated() {
            let isEncoded = token.hasPrefix("=?UTF-8?B?") && token.hasSuffix("?=") && token.count >= 12
            if index > 0 && !(isEncoded && previousWasEncoded) { result += " " }
            if isEncoded {
                guard let data = Data(base64Encoded: String(token.dropFirst(10).dropLast(2))),
                      let text = String(data: data, encoding: .utf8) else { return nil }
                result += text
            } else {
                result += token
            }
            previousWasEncoded = isEncoded
        }
        return result
    }

    /// The decoded text of each encoded word of `value`, in order.
    static func encodedWordTexts(_ value: String) -> [String] {
        unfold(value).split(separator: " ").compactMap { token in
            guard token.hasPrefix("=?UTF-8?B?"), token.hasSuffix("?=") else { return nil }
            return Data(base64Encoded: String(token.dropFirst(10).dropLast(2)))
                .flatMap { String(data: $0, encoding: .utf8) }
        }
    }

    /// Splits a rendered message into physical header lines, unfolded header fields and body.
    static func split(_ message: [UInt8]) -> (lines: [String], fields: [(name: String, value: String)], body: String) {
        let text = String(decoding: message, as: UTF8.self)
        let separator = text.range(of: "\r\n\r\n")!
        let head = String(text[..<separator.lowerBound])
        let lines = head.components(separatedBy: "\r\n")
        var fields: [(name: String, value: String)] = []
        for line in lines {
            if line.hasPrefix(" ") || line.hasPrefix("\t") {
                fields[fields.count - 1].value += line
            } else {
                let colon = line.firstIndex(of: ":")!
                fields.append((String(line[..<colon]), String(line[line.index(after: colon)...].dropFirst())))
            }
        }
        return (lines, fields, String(text[separator.upperBound...]))
    }

    /// Decodes base64 split over CRLF lines into a UTF-8 string.
    static func decodeBase64Lines(_ text: String) -> String? {
        Data(base64Encoded: text.replacingOccurrences(of: "\r\n", with: ""))
            .flatMap { String(data: $0, encoding: .utf8) }
    }

    /// Converts LF and CR line ends to CRLF, as the renderer does.
    static func crlf(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
    }
}
