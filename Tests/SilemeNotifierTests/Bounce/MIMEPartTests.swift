import Bounce
import Foundation
import Testing

/// The small MIME reader under the bounce parser: the cases real MTAs produce.
@Suite("MIME reader")
struct MIMEPartTests {
    static func part(_ text: String) -> MIMEPart { MIMEPart(message: Array(text.utf8)[...]) }

    @Test("folded fields unfold; names are case-insensitive; an mbox From line is skipped")
    func fields() {
        let part = Self.part("From MAILER-DAEMON Fri Nov 27 10:00:00 2026\nSubject: one\n two\nCONTENT-type: text/plain\n\nbody\n")
        #expect(part.fields["subject"] == "one two")
        #expect(part.mediaType == "text/plain")
        #expect(String(decoding: part.body, as: UTF8.self) == "body\n")
    }

    @Test("nested multiparts, quoted and bare boundaries, transport padding, no closing delimiter")
    func nesting() {
        let text = """
        Content-Type: multipart/mixed; boundary="outer b"

        preamble
        --outer b\u{20}\u{20}
        Content-Type: multipart/alternative; boundary=inner

        --inner
        Content-Type: text/plain

        first
        --inner
        Content-Type: text/html

        <p>second</p>
        --inner--
        --outer b
        Content-Type: message/delivery-status

        Reporting-MTA: dns; x.example

        Final-Recipient: rfc822; a@b.example
        Action: failed
        Status: 5.1.1
        """
        let message = Self.part(text)
        #expect(message.parts.count == 2)
        #expect(message.parts[0].parts.map(\.mediaType) == ["text/plain", "text/html"])
        #expect(String(decoding: message.parts[0].parts[0].body, as: UTF8.self) == "first")
        #expect(message.allParts.map(\.mediaType).contains("message/delivery-status"))
        let report = BounceReport.read(Array(text.utf8))
        #expect(report.verdict == .permanent && report.recipients.first?.finalRecipient == "a@b.example")
    }

    @Test("quoted-printable and base64 bodies decode, leniently")
    func transferEncodings() {
        let qp = Self.part("Content-Transfer-Encoding: quoted-printable\n\nStatus: 5.1.=\n1 caf=C3=A9 =ZZ\n")
        #expect(String(decoding: qp.decodedBody, as: UTF8.self) == "Status: 5.1.1 café =ZZ\n")
        let b64 = Self.part("Content-Transfer-Encoding: base64\n\nQWN0aW9uOiBm\nYWlsZWQ=\n")
        #expect(String(decoding: b64.decodedBody, as: UTF8.self) == "Action: failed")
    }

    @Test("a delivery status in base64 is read")
    func base64Status() {
        let status = "Reporting-MTA: dns; x.example\r\n\r\nFinal-Recipient: rfc822; <a@b.example>\r\nAction: failed\r\nStatus: 5.2.2\r\n"
        let encoded = Array(status.utf8).base64
        let text = "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\n"
            + "Content-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\n\(encoded)\r\n--b--\r\n"
        let report = BounceReport.read(Array(text.utf8))
        #expect(report.verdict == .permanent && report.recipients.first?.status == "5.2.2" && report.recipients.first?.address == "a@b.example")
    }

    @Test("a report inside a returned message is another system's: not read as ours")
    func enclosedReportIgnored() {
        let text = """
        Content-Type: multipart/mixed; boundary=b

        --b
        Content-Type: message/rfc822

        Message-ID: <x@y>
        Content-Type: multipart/report; report-type=delivery-status; boundary=c

        --c
        Content-Type: message/delivery-status

        Final-Recipient: rfc822; a@b.example
        Action: failed
        Status: 5.1.1
        --c--
        --b--
        """
        let report = BounceReport.read(Array(text.utf8))
        #expect(report.verdict == .unparsed && report.returnedMessageID == "x@y")
    }

    @Test("every corpus message cut short anywhere, or with bytes garbled, reads without a trap")
    func truncatedAndGarbled() throws {
        var generator = SystemRandomNumberGenerator()
        for name in BounceCorpus.names {
            let bytes = try BounceCorpus.bytes(name)
            for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 60)) {
                _ = BounceReport.read(Array(bytes.prefix(cut)))
            }
            for _ in 0..<20 {
                var garbled = bytes
                for _ in 0..<8 {
                    garbled[Int.random(in: 0..<garbled.count, using: &generator)] = [0x0A, 0x0D, 0x3D, 0x2D, 0x3A, 0x00, 0xFF].randomElement(using: &generator)!
                }
                _ = BounceReport.read(garbled)
            }
        }
    }

    @Test("deep nesting stops at the limit instead of recursing without end")
    func depthLimit() {
        var text = ""
        for level in 0..<200 { text += "Content-Type: multipart/mixed; boundary=b\(level)\n\n--b\(level)\n" }
        #expect(BounceReport.read(Array(text.utf8)).verdict == .unparsed)
    }
}

extension Array where Element == UInt8 {
    /// Standard base64 with line breaks every 76 characters, as MTAs write it.
    var base64: String { Data(self).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed]) }
}
