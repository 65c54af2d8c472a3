import Foundation
import Values

/// One notification mail, rendered to the exact bytes handed to the SMTP client.
///
/// The header set is fixed: `Date`, `From`, `To`, `Subject`, `Message-ID` (with `In-Reply-To` and
/// `References` for a reply), `MIME-Version`,
/// `Auto-Submitted: auto-generated`, `X-Auto-Response-Suppress: All` and the MIME content headers.
/// Nothing from the database can add or break a header: addresses are validated `EmailAddress`es,
/// the sender name and subject are RFC 2047-encoded when not plain ASCII, and the Message-ID is
/// reduced to the characters a `msg-id` allows. Bodies are UTF-8 in base64.
package struct MailMessage: Sendable {
    /// The sender (`FROM_EMAIL`).
    package var from: EmailAddress
    /// The sender's display name (`FROM_NAME`), if any.
    package var fromName: String?
    /// The emergency contact.
    package var to: EmailAddress
    /// The subject, any Unicode text.
    package var subject: String
    /// The plain-text body; line ends may be LF, CR or CRLF.
    package var textBody: String
    /// An optional HTML alternative; with it the mail is `multipart/alternative`.
    package var htmlBody: String?
    /// The `Date:` of the mail.
    package var date: Date
    /// The zone the `Date:` is written in (the service zone).
    package var timeZone: TimeZone
    /// The Message-ID without angle brackets, e.g. `sileme.20260113.abcd.0123456789abcdef@sileme.app`.
    package var messageID: String
    /// The Message-ID (without angle brackets) this mail answers — an all-clear or a follow-up
    /// answers its alert — written as `In-Reply-To` and `References`, so mail programs thread it.
    package var inReplyTo: String?

    /// Creates a message; see the properties.
    package init(
        from: EmailAddress, fromName: String? = nil, to: EmailAddress, subject: String,
        textBody: String, htmlBody: String? = nil, date: Date, timeZone: TimeZone, messageID: String,
        inReplyTo: String? = nil
    ) {
        self.inReplyTo = inReplyTo
        self.from = from
        self.fromName = fromName
        self.to = to
        self.subject = subject
        self.textBody = textBody
        self.htmlBody = htmlBody
        self.date = date
        self.timeZone = timeZone
        self.messageID = messageID
    }

    /// The most characters of the user id a Message-ID keeps (a UUID has 36).
    package static let maxUserIDLength = 64

    /// A new unique Message-ID (without angle brackets):
    /// `sileme.<runDate without dashes>.<userID reduced to [A-Za-z0-9-]>.<16 random hex>@<domain>`.
    ///
    /// With a UUID user id and a short domain the id is about 80 characters, so its header line
    /// exceeds 78 characters; it is not folded (still far below the 998 limit, and some software
    /// mishandles folded Message-IDs).
    ///
    /// The user id part keeps at most `maxUserIDLength` characters and is left out when nothing
    /// is left of it: a hand-made database with a text key could otherwise make the line longer
    /// than RFC 5322's 998 octets, or an empty part (`..`) that is not a valid `dot-atom`. The
    /// random part keeps the id unique either way.
    package static func makeMessageID(userID: String, runDate: String, domain: String) -> String {
        func keep(_ text: String, _ extra: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.filter {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || extra.unicodeScalars.contains($0)
            }))
        }
        let random = String(UInt64.random(in: .min ... .max), radix: 16)
        let hex = String(repeating: "0", count: 16 - random.count) + random
        let user = String(keep(userID, "-").prefix(maxUserIDLength))
        return "sileme.\(keep(runDate, "")).\(user.isEmpty ? "" : user + ".")\(hex)@\(keep(domain, "-.").lowercased())"
    }

    /// The complete message: header block, blank line, body; CRLF line ends throughout.
    package func rendered() -> [UInt8] {
        var lines = [
            "Date: " + HeaderEncoding.dateHeader(date, timeZone: timeZone),
            "From: " + HeaderEncoding.displayNameMailbox(name: fromName, address: from.address, prefixLength: 6),
            "To: " + to.address,
            "Subject: " + HeaderEncoding.encodedWords(subject, prefixLength: 9),
            "Message-ID: <\(Self.safeMessageID(messageID))>",
        ]
        if let inReplyTo, case let id = Self.safeMessageID(inReplyTo), !id.isEmpty {
            lines += ["In-Reply-To: <\(id)>", "References: <\(id)>"]
        }
        lines += [
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
            "X-Auto-Response-Suppress: All",
        ]
        if let htmlBody {
            let boundary = "=_sileme_" + (0..<3).map { _ in
                String(UInt64.random(in: 1 << 60 ... .max), radix: 16)
            }.joined()
            lines += [
                "Content-Type: multipart/alternative;",
                " boundary=\"\(boundary)\"",
                "",
                "This is a multi-part message in MIME format.",
                "--" + boundary,
            ]
            lines += Self.part(textBody, subtype: "plain")
            lines.append("--" + boundary)
            lines += Self.part(htmlBody, subtype: "html")
            lines.append("--" + boundary + "--")
        } else {
            lines += Self.part(textBody, subtype: "plain")
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// Content headers, a blank line and the base64 body (76-character lines) of one text part.
    private static func part(_ text: String, subtype: String) -> [String] {
        // CRLF line ends: CR LF, a lone CR and a lone LF all become CR LF (one pass over the bytes).
        var normalized: [UInt8] = []
        normalized.reserveCapacity(text.utf8.count + 32)
        var previousCR = false
        for byte in text.utf8 {
            switch byte {
            case 0x0D:
                normalized += [0x0D, 0x0A]
                previousCR = true
            case 0x0A:
                if !previousCR { normalized += [0x0D, 0x0A] }
                previousCR = false
            default:
                normalized.append(byte)
                previousCR = false
            }
        }
        let base64 = Data(normalized).base64EncodedString()
        var body: [String] = []
        var start = base64.startIndex
        while start < base64.endIndex {
            let end = base64.index(start, offsetBy: 76, limitedBy: base64.endIndex) ?? base64.endIndex
            body.append(String(base64[start..<end]))
            start = end
        }
        return ["Content-Type: text/\(subtype); charset=UTF-8", "Content-Transfer-Encoding: base64", ""] + body
    }

    /// The id with angle brackets and anything outside RFC 5322 `atext`, `.` and `@` removed, so a
    /// value read back from the database cannot break the header.
    private static func safeMessageID(_ id: String) -> String {
        String(String.UnicodeScalarView(id.unicodeScalars.filter {
            $0.isASCII && ($0 == "." || $0 == "@" || EmailAddress.isAtext(UInt8($0.value)))
        }))
    }
}
