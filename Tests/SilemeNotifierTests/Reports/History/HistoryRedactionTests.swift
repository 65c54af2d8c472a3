import Foundation
import Testing
@testable import Output
@testable import Reports

/// What the history report may show: masking, printable text, HTML escaping.
@Suite("History redaction and escaping")
struct HistoryRedactionTests {
    @Test("addresses inside replies are masked unless full emails are asked for", arguments: [
        ("550 5.1.1 <zhang@example.com>: User unknown", "550 5.1.1 <z***@example.com>: User unknown"),
        ("rcpt to:li.si@例子.中国 refused", "rcpt to:l***@例子.中国 refused"),
        ("emergency email: missing @", "emergency email: missing @"),
        ("x@ and @y stay", "x@ and @y stay"),
        ("no address", "no address"),
    ])
    func masking(raw: String, masked: String) {
        #expect(HistoryRedaction(fullEmails: false).text(raw) == masked)
        #expect(HistoryRedaction(fullEmails: true).text(raw) == raw)
    }

    @Test("control characters never reach the report; identifiers are not masked")
    func printable() {
        let redaction = HistoryRedaction(fullEmails: false)
        #expect(redaction.text("a\u{1B}[2Jb\nc") == "a\u{FFFD}[2Jb\u{FFFD}c")
        #expect(redaction.plain("20260113.abc@notifier-1") == "20260113.abc@notifier-1")
        #expect(redaction.email("zhang@example.com") == "z***@example.com")
        #expect(HistoryRedaction(fullEmails: true).email("zhang@example.com") == "zhang@example.com")
        #expect(redaction.text(nil) == nil)
    }

    @Test("HTML escaping covers text and attribute values", arguments: [
        ("<script>alert('x')</script>", "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
        ("a & b \"c\"", "a &amp; b &quot;c&quot;"),
        ("张三", "张三"),
        ("&amp;", "&amp;amp;"),
    ])
    func html(raw: String, escaped: String) {
        #expect(Escaping.html(raw) == escaped)
    }
}
