import Foundation
import Testing
import Values
import Mail

@Suite("MailMessage")
struct MailMessageTests {
    static let fromName = "一键打卡团队 👨‍👩‍👧"
    static let subject = "[一键打卡] 关于 王小明👩‍🦳 的签到提醒"
    static let text = "您好，\n\n您是 王小明 设置的紧急联系人。\r\n\r\n王小明 已连续 2 天未在\"一键打卡\"应用中签到。\r此致\n一键打卡团队 😀\n"
    static let html = "<p>您好，</p>\n<p>王小明 已连续 <b>2</b> 天未签到。</p>\n"

    static func message(html: String? = nil, fromName: String? = MailMessageTests.fromName,
                        subject: String = MailMessageTests.subject,
                        messageID: String = "sileme.20260113.u1.0123456789abcdef@sileme.app") throws -> MailMessage {
        MailMessage(
            from: try EmailAddress(validating: "noreply@sileme.app"), fromName: fromName,
            to: try EmailAddress(validating: "contact@例子.中国"), subject: subject,
            textBody: text, htmlBody: html, date: Date(timeIntervalSince1970: 1_768_266_000),
            timeZone: TimeZone(identifier: "Asia/Shanghai")!, messageID: messageID)
    }

    static let headerNames = [
        "Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Auto-Submitted",
        "X-Auto-Response-Suppress", "Content-Type", "Content-Transfer-Encoding",
    ]

    /// CRLF only: every LF preceded by CR, every CR followed by LF.
    private func expectCRLF(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, byte) in bytes.enumerated() {
            if byte == 0x0A { #expect(index > 0 && bytes[index - 1] == 0x0D, sourceLocation: sourceLocation) }
            if byte == 0x0D { #expect(index + 1 < bytes.count && bytes[index + 1] == 0x0A, sourceLocation: sourceLocation) }
        }
        #expect(bytes.suffix(2) == [0x0D, 0x0A], sourceLocation: sourceLocation)
    }

    @Test("single-part message: headers, CRLF, base64 body")
    func plain() throws {
        let bytes = try Self.message().rendered()
        expectCRLF(bytes)
        let (lines, fields, body) = MIMETestSupport.split(bytes)
        #expect(fields.map(\.name) == Self.headerNames)
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        #expect(bytes.allSatisfy { $0 < 0x80 })  // 7-bit clean

        let value = { (name: String) in fields.first { $0.name == name }!.value }
        #expect(value("Date") == "Tue, 13 Jan 2026 09:00:00 +0800")
        #expect(value("To") == "contact@xn--fsqu00a.xn--fiqs8s")
        #expect(value("Message-ID") == "<sileme.20260113.u1.0123456789abcdef@sileme.app>")
        #expect(value("MIME-Version") == "1.0")
        #expect(value("Auto-Submitted") == "auto-generated")
        #expect(value("X-Auto-Response-Suppress") == "All")
        #expect(value("Content-Type") == "text/plain; charset=UTF-8")
        #expect(value("Content-Transfer-Encoding") == "base64")
        #expect(MIMETestSupport.decodeWords(value("Subject")) == Self.subject)
        #expect(value("From").hasSuffix(" <noreply@sileme.app>"))
        #expect(MIMETestSupport.decodeWords(String(value("From").dropLast(" <noreply@sileme.app>".count))) == Self.fromName)

        let bodyLines = body.components(separatedBy: "\r\n").dropLast()
        #expect(bodyLines.allSatisfy { $0.utf8.count <= 76 })
        #expect(bodyLines.dropLast().allSatisfy { $0.utf8.count == 76 })
        #expect(MIMETestSupport.decodeBase64Lines(body) == MIMETestSupport.crlf(Self.text))
    }

    @Test("with HTML: multipart/alternative with a boundary that base64 cannot contain")
    func multipart() throws {
        let bytes = try Self.message(html: Self.html).rendered()
        expectCRLF(bytes)
        let (lines, fields, body) = MIMETestSupport.split(bytes)
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        #expect(fields.map(\.name) == Array(Self.headerNames.dropLast()))
        let contentType = fields.first { $0.name == "Content-Type" }!.value
        let boundary = try #require(contentType.split(separator: "\"").dropFirst().first.map(String.init))
        #expect(contentType.hasPrefix("multipart/alternative;"))
        #expect(boundary.contains("=_") && boundary.count <= 70)

        let parts = body.components(separatedBy: "--\(boundary)")
        #expect(parts.count == 4)  // preamble, text, html, epilogue
        #expect(parts[3] == "--\r\n")
        for (part, subtype, content) in [(parts[1], "plain", Self.text), (parts[2], "html", Self.html)] {
            let sections = part.components(separatedBy: "\r\n\r\n")
            #expect(sections.count == 2)
            #expect(sections[0] == "\r\nContent-Type: text/\(subtype); charset=UTF-8\r\nContent-Transfer-Encoding: base64")
            #expect(MIMETestSupport.decodeBase64Lines(sections[1]) == MIMETestSupport.crlf(content))
        }
        // A second rendering picks a new boundary.
        #expect(try Self.message(html: Self.html).rendered() != bytes)
    }

    @Test("no value can add or break a header")
    func injection() throws {
        let evil = "x\r\nBcc: victim@example.com\r\n\r\nbody"
        let message = try Self.message(html: nil, fromName: evil, subject: evil, messageID: "id@x>\r\nBcc: a@b.c")
        let bytes = message.rendered()
        expectCRLF(bytes)
        let (lines, fields, _) = MIMETestSupport.split(bytes)
        #expect(fields.map(\.name) == Self.headerNames)
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        let value = { (name: String) in fields.first { $0.name == name }!.value }
        #expect(MIMETestSupport.decodeWords(value("Subject")) == evil)
        #expect(value("Message-ID") == "<id@xBcc:a@b.c>".replacingOccurrences(of: ":", with: ""))
    }

    @Test("makeMessageID builds a unique, header-safe id")
    func messageID() throws {
        let id = MailMessage.makeMessageID(userID: "3f2b8c1e-9a7d-4e1b-8c2a-5d6e7f8a9b0c", runDate: "2026-01-13", domain: "Sileme.App")
        let parts = id.split(separator: "@")
        #expect(parts.count == 2 && parts[1] == "sileme.app")
        let fields = parts[0].split(separator: ".")
        #expect(fields.count == 4)
        #expect(fields[0] == "sileme" && fields[1] == "20260113" && fields[2] == "3f2b8c1e-9a7d-4e1b-8c2a-5d6e7f8a9b0c")
        #expect(fields[3].count == 16 && fields[3].allSatisfy(\.isHexDigit))
        #expect(MailMessage.makeMessageID(userID: "u/1_x\r\n.<y>", runDate: "2026-01-13", domain: "x.com")
            .hasPrefix("sileme.20260113.u1xy."))
        let many = Set((0..<1000).map { _ in MailMessage.makeMessageID(userID: "u", runDate: "2026-01-13", domain: "x.com") })
        #expect(many.count == 1000)

        // A UUID id makes the only line that may pass 78 characters; it stays unfolded and legal.
        let (lines, _, _) = MIMETestSupport.split(try Self.message(messageID: id).rendered())
        #expect(lines.filter { $0.utf8.count > 78 } == ["Message-ID: <\(id)>"])
        #expect(lines.allSatisfy { $0.utf8.count <= 998 })
    }

    private static let python = "/usr/bin/python3"
    private static let parser = """
        import sys, json, email, email.policy
        msg = email.message_from_bytes(sys.stdin.buffer.read(), policy=email.policy.default)
        html = msg.get_body(preferencelist=("html",))
        print(json.dumps({
            "subject": str(msg["subject"]),
            "from_name": msg["from"].addresses[0].display_name,
            "from": msg["from"].addresses[0].addr_spec,
            "to": msg["to"].addresses[0].addr_spec,
            "message_id": str(msg["message-id"]),
            "text": msg.get_body(preferencelist=("plain",)).get_content(),
            "html": html.get_content() if html is not None else None,
            "defects": [str(d) for part in msg.walk() for d in part.defects]
                + [str(d) for k in msg.keys() for d in msg[k].defects],
        }))
        """

    @Test("Python's email parser reads back subject, sender name and bodies",
          .enabled(if: FileManager.default.isExecutableFile(atPath: python)),
          arguments: [nil, html])
    func pythonParser(html: String?) throws {
        let message = try Self.message(html: html)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = ["-c", Self.parser]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(message.rendered()))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        let parsed = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(parsed["subject"] as? String == Self.subject)
        #expect(parsed["from_name"] as? String == Self.fromName)
        #expect(parsed["from"] as? String == "noreply@sileme.app")
        #expect(parsed["to"] as? String == "contact@xn--fsqu00a.xn--fiqs8s")
        #expect(parsed["message_id"] as? String == "<sileme.20260113.u1.0123456789abcdef@sileme.app>")
        #expect((parsed["text"] as? String).map(MIMETestSupport.crlf) == MIMETestSupport.crlf(Self.text))
        #expect((parsed["html"] as? String).map(MIMETestSupport.crlf) == html.map(MIMETestSupport.crlf))
        #expect((parsed["defects"] as? [String]) == [])
    }
}
