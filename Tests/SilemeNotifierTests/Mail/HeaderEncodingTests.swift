import Foundation
import Testing
import Mail

@Suite("HeaderEncoding")
struct HeaderEncodingTests {
    /// Chinese, a ZWJ family, a flag, accents and ASCII, so splits land everywhere.
    private static let mixed = "一键打卡👨‍👩‍👧签到A提醒 é😀🇨🇳x"

    /// Lines ≤ 78, folds only as CRLF + space, no other CR or LF.
    private func expectWellFolded(_ value: String, prefixLength: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = value.components(separatedBy: "\r\n")
        #expect(prefixLength + lines[0].utf8.count <= 78, sourceLocation: sourceLocation)
        for line in lines.dropFirst() {
            #expect(line.utf8.count <= 78, sourceLocation: sourceLocation)
            #expect(line.hasPrefix(" ") && !line.dropFirst().hasPrefix(" "), sourceLocation: sourceLocation)
        }
        #expect(!lines.contains { $0.contains("\r") || $0.contains("\n") }, sourceLocation: sourceLocation)
    }

    @Test("encoded words round-trip every length 1…120", arguments: [9, 6, 30, 60, 70])
    func roundTrip(prefixLength: Int) {
        let source = Array(String(repeating: Self.mixed, count: 10))
        for length in 1...120 {
            let text = String(source.prefix(length))
            let encoded = HeaderEncoding.encodedWords(text, prefixLength: prefixLength)
            #expect(MIMETestSupport.decodeWords(encoded) == text, "length \(length)")
            expectWellFolded(encoded, prefixLength: prefixLength)
            // Each word holds whole grapheme clusters: the running concatenation is always a
            // prefix of the input's clusters, never a cluster cut in half.
            var decoded = ""
            for word in MIMETestSupport.encodedWordTexts(encoded) {
                #expect(!word.isEmpty)
                decoded += word
                #expect(Array(text).starts(with: Array(decoded)), "length \(length)")
            }
            for token in MIMETestSupport.unfold(encoded).split(separator: " ") {
                #expect(token.count <= 75)  // RFC 2047's limit for one encoded word
            }
        }
    }

    @Test("a cluster longer than one word is split between scalars only")
    func hugeCluster() {
        let zalgo = "e" + String(repeating: "\u{0301}", count: 40) + "好"
        #expect(zalgo.count == 2)
        let encoded = HeaderEncoding.encodedWords(zalgo, prefixLength: 9)
        #expect(MIMETestSupport.decodeWords(encoded) == zalgo)
        #expect(MIMETestSupport.encodedWordTexts(encoded).count > 1)
        expectWellFolded(encoded, prefixLength: 9)
    }

    @Test("plain ASCII stays readable, folded at spaces")
    func plainASCII() {
        #expect(HeaderEncoding.encodedWords("Check-in reminder", prefixLength: 9) == "Check-in reminder")
        #expect(HeaderEncoding.encodedWords("", prefixLength: 9) == "")
        let long = (1...40).map { "word\($0)" }.joined(separator: " ")
        let folded = HeaderEncoding.encodedWords(long, prefixLength: 9)
        #expect(folded.contains("\r\n "))
        #expect(!folded.contains("=?"))
        #expect(MIMETestSupport.unfold(folded) == long)
        expectWellFolded(folded, prefixLength: 9)
    }

    @Test("ASCII that is unsafe or unfoldable is encoded", arguments: [
        "a\r\nBcc: evil@example.com", "tab\there", "double  space", " leading", "trailing ",
        "looks =?UTF-8?B?YQ==?= encoded", String(repeating: "x", count: 100), "bell\u{7}",
    ])
    func asciiEncoded(text: String) {
        let encoded = HeaderEncoding.encodedWords(text, prefixLength: 9)
        #expect(encoded.hasPrefix("=?UTF-8?B?"))
        #expect(MIMETestSupport.decodeWords(encoded) == text)
        expectWellFolded(encoded, prefixLength: 9)
    }

    @Test("a prefix too long for any word starts the value with a fold")
    func longPrefix() {
        let encoded = HeaderEncoding.encodedWords("😀签到", prefixLength: 75)
        #expect(encoded.hasPrefix("\r\n =?UTF-8?B?"))
        #expect(MIMETestSupport.decodeWords(encoded) == "😀签到")
        expectWellFolded(encoded, prefixLength: 75)
    }

    @Test("mailboxes")
    func mailboxes() {
        let address = "noreply@sileme.app"
        #expect(HeaderEncoding.displayNameMailbox(name: nil, address: address, prefixLength: 6) == address)
        #expect(HeaderEncoding.displayNameMailbox(name: "", address: address, prefixLength: 6) == address)
        #expect(HeaderEncoding.displayNameMailbox(name: "SileMe Team", address: address, prefixLength: 6)
            == "SileMe Team <noreply@sileme.app>")
        for name in ["一键打卡团队", "John Q. Public", "O'Brien, Pat", "\"Evil\" <x@y.com>", "a\r\nBcc: x@y.com", "👨‍👩‍👧 家"] {
            let mailbox = HeaderEncoding.displayNameMailbox(name: name, address: address, prefixLength: 6)
            #expect(mailbox.hasPrefix("=?UTF-8?B?"), "\(name)")
            #expect(mailbox.hasSuffix(" <noreply@sileme.app>"))
            let phrase = String(MIMETestSupport.unfold(mailbox).dropLast(" <noreply@sileme.app>".count))
            #expect(MIMETestSupport.decodeWords(phrase) == name)
            expectWellFolded(mailbox, prefixLength: 6)
        }
    }

    @Test("long display names fold, the address moving to its own line when needed")
    func longMailbox() {
        let address = "notifications@mail.sileme.example.com"
        let cases = [
            (String(repeating: "一键打卡", count: 12), false),  // the last word leaves room
            (String(repeating: "一键打卡", count: 11), true),  // the last word fills its line
            ("Sileme Notification Service Of The Check In App Team", true),
        ]
        for (name, ownLine) in cases {
            let mailbox = HeaderEncoding.displayNameMailbox(name: name, address: address, prefixLength: 6)
            expectWellFolded(mailbox, prefixLength: 6)
            #expect(mailbox.hasSuffix("\r\n <\(address)>") == ownLine, "\(name)")
            #expect(mailbox.hasSuffix(" <\(address)>"))
            let phrase = String(MIMETestSupport.unfold(mailbox).dropLast(" <\(address)>".count))
            #expect(MIMETestSupport.decodeWords(phrase) == name)
        }
    }

    @Test("RFC 5322 dates in English, in the given zone", arguments: [
        (1_768_266_000.0, "Asia/Shanghai", "Tue, 13 Jan 2026 09:00:00 +0800"),
        (1_768_266_000.0, "UTC", "Tue, 13 Jan 2026 01:00:00 +0000"),
        (1_768_266_000.0, "America/New_York", "Mon, 12 Jan 2026 20:00:00 -0500"),
        (1_768_266_000.0, "Asia/Kolkata", "Tue, 13 Jan 2026 06:30:00 +0530"),
        (1_783_000_000.9, "America/St_Johns", "Thu, 02 Jul 2026 11:16:40 -0230"),
        (0.0, "UTC", "Thu, 01 Jan 1970 00:00:00 +0000"),
    ])
    func dates(seconds: Double, zone: String, expected: String) throws {
        let timeZone = try #require(TimeZone(identifier: zone))
        #expect(HeaderEncoding.dateHeader(Date(timeIntervalSince1970: seconds), timeZone: timeZone) == expected)
    }
}
