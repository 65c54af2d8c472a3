import Foundation
import Testing
@testable import Values
@testable import Output
@testable import Reports
import TestSupport

/// The history report's fast paths give exactly what the code they shortcut gives.
@Suite("History fast paths")
struct HistoryFastPathTests {
    static let texts = [
        "", "plain", "张三", "a\"b", "back\\slash", "tab\there", "line\nbreak", "cr\rx", "\u{0}nul", "del\u{7F}",
        "c1\u{85}next", "c1\u{9F}", "\u{A0}nbsp", "sep\u{2028}x\u{2029}", "emoji 👩‍👩‍👧", "é\u{301}", "=1+1", "-x", "@home",
        "a,b", "  spaced@example.com ", "zhang@example.com", "no-at", "x@", "@y", "名字@例子.中国", "\u{E2}\u{80}",
    ]

    @Test("JSON strings: the fast path and the full escaping both parse back to the text", arguments: texts)
    func json(text: String) throws {
        let literal = Escaping.json(text)
        let parsed = try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String
        #expect(parsed == text)
        #expect(!literal.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{2028}" || $0 == "\u{2029}" })
    }

    @Test("printable, masking and CSV fields equal the plain definitions", arguments: texts)
    func text(text: String) {
        let printable = String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control ? "\u{FFFD}" : $0
        }))
        #expect(Printable.text(text) == printable)
        let trimmed = Printable.text(text.trimmingCharacters(in: .whitespaces))
        let masked = trimmed.first.map { first in trimmed.lastIndex(of: "@").map { "\(first)***\(trimmed[$0...])" } ?? "\(first)***" } ?? ""
        #expect(EmailMasking.mask(text) == masked)
        let field = Escaping.csv(text)
        let defused = text.first.map { "=+-@".contains($0) } == true ? "'" + text : text
        #expect(CSVText.rows(field + "\r\n") == [[defused]])
    }

    @Test("dates", arguments: [-719_528, -1, 0, 1, 10_957, 20_466, 2_932_896])
    func dates(dayNumber: Int) {
        let date = CalendarDate(dayNumber: dayNumber)
        #expect(HistoryTime.day(date) == date.description)
    }

    @Test("instants before 1970 and across a day")
    func instants() {
        let time = HistoryTime(zone: TimeZone(identifier: "Asia/Shanghai")!)
        #expect(time.iso(Date(timeIntervalSince1970: -1)) == "1970-01-01T07:59:59+08:00")
        #expect(time.iso(Date(timeIntervalSince1970: 57_599.5)) == "1970-01-01T23:59:59+08:00")
        #expect(time.iso(Date(timeIntervalSince1970: 57_600)) == "1970-01-02T00:00:00+08:00")
        #expect(HistoryTime(zone: TimeZone(identifier: "America/St_Johns")!).iso(Date(timeIntervalSince1970: 0))
                == "1969-12-31T20:30:00-03:30")
    }
}

extension HistoryFastPathTests {
    @Test("address masking by bytes equals masking by scalars", arguments: texts + [
        "550 <zhang@example.com>: no", "a@b c@d", "(x@y.z)", "'q@w'", "\u{3000}u@v.w\u{3000}", "名@例.中国 ok", "@@", "a@@b",
        "x@y\u{A0}z@w", "tab\tl@m.n\n",
    ])
    func masking(text: String) {
        #expect(HistoryRedaction.maskingAddresses(in: text) == HistoryRedaction.maskingAddressesByScalar(in: text))
    }
}
