import Foundation
import Testing
import TestSupport
@testable import Output
@testable import Reports
import Values

/// The bounces in the history report (docs/bounces.md), in every format: the `bounced` rows
/// counted per day and in the totals (and among the undelivered), and the bounce reports read per
/// day and per recipient domain, the permanent ones by class (`BounceClass`).
@Suite("History report: bounces")
struct HistoryBounceTests {
    typealias F = HistoryFixtures

    /// The fixtures' history with 2 bounced mails on the 13th and reports read on two days.
    static var overview: HistoryOverview {
        var overview = F.overview
        overview.days[2].bounced = 2
        overview.byKind = [HistoryOverview.KindCount(kind: "alert", channel: "email", sent: 5, failed: 3, pending: 1, bounced: 2)]
        let classes: [BounceClass: Int] = [.noSuchAddress: 1, .policy: 1]
        overview.bouncesByDay = [HistoryOverview.BounceCount(key: "2026-01-12", transient: 1),
                                 HistoryOverview.BounceCount(key: "2026-01-13", permanent: 2, unmatched: 1, permanentByClass: classes)]
        overview.bouncesByDomain = [HistoryOverview.BounceCount(key: "gone.example", permanent: 2, transient: 1, permanentByClass: classes),
                                    HistoryOverview.BounceCount(key: "", unmatched: 1)]
        return overview
    }

    static func render(_ format: HistoryFormat) throws -> String {
        try F.render(format) { sink in
            try sink.begin(F.header(), overview: overview)
            for section in [HistorySection.runs, .problems] {
                try sink.beginSection(section)
                try sink.endSection(section)
            }
            try sink.end()
        }
    }

    @Test("a bounced mail is not sent: its own count, among the undelivered and the rows")
    func counts() {
        var day = DayCounts(date: F.date("2026-01-13"))
        day.sent = 3
        day.bounced = 2
        #expect(day.undelivered == 2 && day.rows == 5)
        var total = DayCounts(date: day.date)
        total.add(day)
        total.add(day)
        #expect(total.bounced == 4)
        #expect(HistoryOverview.BounceCount(key: "x", permanent: 1, transient: 2, complaint: 1, unmatched: 3).described
                == "1 permanent, 2 transient, 1 complaint, 3 unmatched")
        var count = HistoryOverview.BounceCount(key: "x")
        count.add(kind: "permanent", bounceClass: .mailbox, 2)
        count.add(kind: "permanent", bounceClass: .noSuchAddress, 1)
        count.add(kind: "permanent", bounceClass: nil, 1)
        count.add(kind: "transient", bounceClass: nil, 1)
        #expect(count.permanent == 4 && count.transient == 1)
        #expect(count.classesDescribed == "1 no_such_address, 2 mailbox, 1 other")
        #expect(HistoryOverview.BounceCount(key: "x", transient: 1).classesDescribed == nil)
    }

    @Test("JSON: bounced per day and in the summary and kinds; the reports per day and per domain")
    func json() throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(try Self.render(.json).utf8)) as? [String: Any])
        let days = try #require(object["days"] as? [[String: Any]])
        #expect(days.map { $0["bounced"] as? Int } == [0, 0, 2])
        #expect((object["summary"] as? [String: Any])?["bounced"] as? Int == 2)
        #expect((object["by_kind"] as? [[String: Any]])?.first?["bounced"] as? Int == 2)
        let bounces = try #require(object["bounces"] as? [String: Any])
        let byDay = try #require(bounces["by_day"] as? [[String: Any]])
        #expect(byDay.map { $0["date"] as? String } == ["2026-01-12", "2026-01-13"])
        #expect(byDay.map { [$0["permanent"], $0["transient"], $0["complaint"], $0["unmatched"]].map { $0 as? Int } }
                == [[0, 1, 0, 0], [2, 0, 0, 1]])
        let byDomain = try #require(bounces["by_domain"] as? [[String: Any]])
        #expect(byDomain.map { $0["domain"] as? String } == ["gone.example", ""])
        #expect(byDomain.first?["permanent"] as? Int == 2)
        let byClass = try #require(byDomain.first?["permanent_by_class"] as? [String: Int])
        #expect(byClass == ["no_such_address": 1, "mailbox": 0, "system": 0, "routing": 0, "protocol": 0, "policy": 1, "other": 0])
        #expect((byDay.first?["permanent_by_class"] as? [String: Int])?.values.allSatisfy { $0 == 0 } == true)
    }

    @Test("CSV: the day records' bounced column, and a record per day and per domain of reports")
    func csv() throws {
        let rows = CSVText.rows(try Self.render(.csv)).filter { $0 != [""] }
        let header = try #require(rows.first)
        func column(_ name: String) throws -> Int { try #require(header.firstIndex(of: name)) }
        let record = try column("record"), bounced = try column("bounced"), date = try column("date"), domain = try column("domain")
        let permanent = try column("permanent"), transient = try column("transient"), unmatched = try column("unmatched")
        #expect(rows.filter { $0[record] == "day" }.map { $0[bounced] } == ["0", "0", "2"])
        let byDay = rows.filter { $0[record] == "bounces_day" }
        #expect(byDay.map { [$0[date], $0[permanent], $0[transient], $0[unmatched]] } == [["2026-01-12", "0", "1", "0"], ["2026-01-13", "2", "0", "1"]])
        let byDomain = rows.filter { $0[record] == "bounces_domain" }
        #expect(byDomain.map { [$0[domain], $0[permanent], $0[transient]] } == [["gone.example", "2", "1"], ["", "0", "0"]])
        let dead = try column("permanent_no_such_address"), policy = try column("permanent_policy"), mailbox = try column("permanent_mailbox")
        #expect(byDomain.map { [$0[dead], $0[policy], $0[mailbox]] } == [["1", "1", "0"], ["0", "0", "0"]])
        #expect(rows.allSatisfy { $0.count == header.count })
    }

    @Test("table: a BOUNCED column, the totals, and the reports per day and domain, in 80 columns")
    func table() throws {
        let text = try Self.render(.table)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 80 }, "\(lines.filter { DisplayWidth.of($0) > 80 })")
        let title = try #require(lines.first { $0.hasPrefix("DATE") })
        #expect(title.contains("BOUNCED"))
        let row = try #require(lines.first { $0.hasPrefix("2026-01-13") })
        let bouncedAt = try #require(title.range(of: "BOUNCED")).upperBound.utf16Offset(in: title)
        #expect(row.utf16.count >= bouncedAt && row.prefix(bouncedAt).hasSuffix("2"), "\(row)")
        #expect(text.contains("  2026-01-13: 2 permanent, 0 transient, 0 complaints, 1 unmatched\n    permanent: 1 no_such_address, 1 policy\n"))
        #expect(text.contains("    gone.example: 2 permanent, 1 transient, 0 complaints, 0 unmatched\n      permanent: 1 no_such_address, 1 policy\n"))
        #expect(text.contains("    (none): 0 permanent, 0 transient, 0 complaints, 1 unmatched"))
        #expect(text.contains("bounced 2"))
        #expect(text.contains("alert 5 sent, 3 failed, 1 pending, 2 bounced;"))
    }

    @Test("HTML: a Bounced card and column, and the reports' tables")
    func html() throws {
        let page = try Self.render(.html)
        #expect(page.contains("<dt>Bounced</dt>") || page.contains(">Bounced<"))
        #expect(page.contains("<th class=\"n\">Bounced</th>"))
        #expect(page.contains("<section id=\"bounces\">"))
        #expect(page.contains("<th class=\"n\">No such address</th><th class=\"n\">Mailbox</th>"))
        #expect(page.contains("<tr><td>gone.example</td><td>2</td><td>1</td><td>0</td><td>0</td><td>0</td><td>0</td><td>1</td><td>0</td>"
                              + "<td>1</td><td>0</td><td>0</td></tr>"))
        #expect(page.contains("<tr><td>2026-01-13</td><td>2</td><td>1</td><td>0</td><td>0</td><td>0</td><td>0</td><td>1</td><td>0</td>"
                              + "<td>0</td><td>0</td><td>1</td></tr>"))
        #expect(page.contains("<tr><td>(none)</td>"))
    }
}
