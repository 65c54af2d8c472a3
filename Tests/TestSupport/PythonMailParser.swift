import Foundation

/// Parses many messages at once with Python's `email` package (`policy.default`) — a parser
/// independent of the project's — in one `/usr/bin/python3` process (a JSON list of base64
/// messages in, a JSON list of results out), so thousands of messages take seconds.
///
/// Also an independent oracle for addresses: `asciiAddresses` converts raw addresses to the form
/// the mail must carry (ASCII whitespace trimmed, domain NFKC-folded and lowercased, U+3002 as a
/// dot, non-ASCII labels in Punycode by Python's RFC 3492 codec).
public enum PythonMailParser {
    /// The interpreter: Debian's, which has the `email` package as the tests expect it.
    public static let python = "/usr/bin/python3"

    /// Whether the interpreter exists (tests are disabled without it).
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: python) }

    /// One address of an address header.
    public struct Mailbox: Decodable, Equatable, Sendable {
        /// The decoded display name ("" when none).
        public let name: String
        /// `local@domain`.
        public let address: String

        /// A mailbox to compare with.
        public init(name: String, address: String) {
            self.name = name
            self.address = address
        }
    }

    /// One leaf (non-multipart) MIME part.
    public struct Part: Decodable, Sendable {
        /// `text/plain`, `text/html`, …
        public let contentType: String
        /// The `charset` parameter, lowercased, or nil.
        public let charset: String?
        /// `Content-Transfer-Encoding`, or nil.
        public let transferEncoding: String?
        /// The decoded content (`get_content()`), or nil when it could not be decoded.
        public let content: String?
    }

    /// What Python made of one message.
    public struct Parsed: Decodable, Sendable {
        /// Header names in message order (duplicates repeated).
        public let headerNames: [String]
        /// Decoded header values by name.
        public let headers: [String: [String]]
        /// Defects Python found in header values (`Name: DefectClass`).
        public let headerDefects: [String]
        /// Defects Python found in the message and its parts.
        public let defects: [String]
        /// The mailboxes of `From:` (nil when the header is missing).
        public let from: [Mailbox]?
        /// The mailboxes of `To:` (nil when the header is missing).
        public let to: [Mailbox]?
        /// Code points (`U+XXXX`) in the decoded Subject and display names that no name should
        /// carry: controls (Cc), format characters (Cf) other than ZWJ/ZWNJ, line and paragraph
        /// separators, and spaces other than U+0020.
        public let invisibleInSubject: [String]
        /// The same for the display names of `From:` and `To:`.
        public let invisibleInNames: [String]
        /// Whether `Date:` parsed to a date-time.
        public let dateParsed: Bool
        /// The top-level content type.
        public let contentType: String
        /// Whether the message is multipart.
        public let isMultipart: Bool
        /// The leaf parts in order.
        public let parts: [Part]
        /// An exception raised while reading the message, if any.
        public let error: String?
    }

    static let script = #"""
    import base64, email, email.policy, json, sys, unicodedata
    from email.header import decode_header, make_header
    from email.utils import getaddresses

    def invisible(text):
        out = []
        for ch in text or "":
            cat = unicodedata.category(ch)
            if cat in ("Cc", "Zl", "Zp") or (cat == "Cf" and ch not in "\u200c\u200d") or (cat == "Zs" and ch != " "):
                out.append("U+%04X" % ord(ch))
        return out

    def mailboxes(header, raw):
        # Addresses from policy.default; display names decoded by email.header, because before
        # cpython gh-128110 (fixed 2025) policy.default kept the white space between two adjacent
        # encoded words of a display name, which RFC 2047 section 6.2 says to ignore.
        if header is None:
            return None
        names = [str(make_header(decode_header(n))) for n, _ in getaddresses([raw.replace("\r", "").replace("\n", "")])]
        boxes = [{"name": a.display_name, "address": a.addr_spec} for a in header.addresses]
        if len(names) == len(boxes):
            for box, name in zip(boxes, names):
                box["name"] = name
        return boxes

    def leaf(part):
        try:
            content = part.get_content()
        except Exception:
            content = None
        return {"contentType": part.get_content_type(), "charset": part.get_param("charset"),
                "transferEncoding": part.get("Content-Transfer-Encoding"), "content": content}

    def parse(raw):
        result = {"headerNames": [], "headers": {}, "headerDefects": [], "defects": [], "from": None, "to": None,
                  "invisibleInSubject": [], "invisibleInNames": [], "dateParsed": False, "contentType": "",
                  "isMultipart": False, "parts": [], "error": None}
        try:
            msg = email.message_from_bytes(raw, policy=email.policy.default)
            legacy = email.message_from_bytes(raw, policy=email.policy.compat32)
            for name, value in msg.items():
                result["headerNames"].append(name)
                result["headers"].setdefault(name, []).append(str(value))
                result["headerDefects"] += ["%s: %s" % (name, type(d).__name__) for d in value.defects]
            for part in msg.walk():
                result["defects"] += [type(d).__name__ for d in part.defects]
                if not part.is_multipart():
                    result["parts"].append(leaf(part))
            result["from"] = mailboxes(msg["From"], legacy["From"])
            result["to"] = mailboxes(msg["To"], legacy["To"])
            result["invisibleInSubject"] = invisible(str(msg["Subject"] or ""))
            result["invisibleInNames"] = [c for m in (result["from"] or []) + (result["to"] or []) for c in invisible(m["name"])]
            date = msg["Date"]
            result["dateParsed"] = date is not None and date.datetime is not None
            result["contentType"] = msg.get_content_type()
            result["isMultipart"] = msg.is_multipart()
        except Exception as error:
            result["error"] = "%s: %s" % (type(error).__name__, error)
        return result

    def ascii_address(raw):
        text = raw.strip(" \t\n\r\x0b\x0c")
        local, _, domain = text.partition("@")
        domain = unicodedata.normalize("NFKC", domain).lower().replace("\u3002", ".")
        labels = [l if l.isascii() else "xn--" + l.encode("punycode").decode("ascii") for l in domain.split(".")]
        return local + "@" + ".".join(labels)

    request = json.load(sys.stdin)
    if request["kind"] == "messages":
        json.dump([parse(base64.b64decode(m)) for m in request["items"]], sys.stdout)
    else:
        json.dump([ascii_address(a) for a in request["items"]], sys.stdout)
    """#

    /// Parses every message in `messages`, in order.
    public static func parse(_ messages: [[UInt8]]) throws -> [Parsed] {
        let output = try run(kind: "messages", items: messages.map { Data($0).base64EncodedString() })
        return try JSONDecoder().decode([Parsed].self, from: output)
    }

    /// The ASCII form (see the type's documentation) of each address in `addresses`.
    public static func asciiAddresses(_ addresses: [String]) throws -> [String] {
        try JSONDecoder().decode([String].self, from: try run(kind: "addresses", items: addresses))
    }

    private static func run(kind: String, items: [String]) throws -> Data {
        let request = try JSONSerialization.data(withJSONObject: ["kind": kind, "items": items])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // Write from another thread: the request and the answer may both exceed a pipe's buffer.
        let writer = input.fileHandleForWriting
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            writer.write(request)
            try? writer.close()
            done.signal()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        done.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(status: process.terminationStatus)
        }
        return data
    }

    /// The Python process failed (its traceback went to standard error).
    public struct Failure: Error, CustomStringConvertible {
        /// The exit status of `/usr/bin/python3`.
        public let status: Int32
        public var description: String { "python email parser exited with status \(status)" }
    }
}
