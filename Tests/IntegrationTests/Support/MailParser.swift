import Foundation

/// Parses a message with Python's `email` package (policy `default`) — an independent parser —
/// and returns what it decoded: headers (name → values), the plain-text and HTML bodies, and any
/// defects it found.
enum MailParser {
    struct Parsed: Decodable {
        let headers: [String: [String]]
        let fromDisplayName: String
        let fromAddress: String
        let text: String?
        let html: String?
        let defects: [String]
        let contentType: String
    }

    static let script = #"""
    import email, email.policy, json, sys
    data = sys.stdin.buffer.read()
    msg = email.message_from_bytes(data, policy=email.policy.default)
    headers = {}
    for name, value in msg.items():
        headers.setdefault(name, []).append(str(value))
    frm = msg["From"]
    addr = frm.addresses[0] if frm is not None and frm.addresses else None
    text = msg.get_body(preferencelist=("plain",))
    html = msg.get_body(preferencelist=("html",))
    defects = [type(d).__name__ for d in msg.defects]
    for part in msg.walk():
        defects += [type(d).__name__ for d in part.defects]
    json.dump({
        "headers": headers,
        "fromDisplayName": addr.display_name if addr else "",
        "fromAddress": addr.addr_spec if addr else "",
        "text": text.get_content() if text is not None else None,
        "html": html.get_content() if html is not None else None,
        "defects": defects,
        "contentType": msg.get_content_type(),
    }, sys.stdout)
    """#

    /// Parses `raw`.
    static func parse(_ raw: Data) throws -> Parsed {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(raw)
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("python email parser failed") }
        return try JSONDecoder().decode(Parsed.self, from: data)
    }
}
