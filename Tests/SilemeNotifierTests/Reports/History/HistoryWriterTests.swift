import Foundation
import Testing
import TestSupport
@testable import Output
@testable import Reports

/// The four writers fed a made-up history (`HistoryFixtures`): JSON and CSV parsed field by field,
/// the table measured in display columns, the HTML checked for escaping and chart geometry.
@Suite("History report writers")
struct HistoryWriterTests {
    /// Short for the fixtures.
    typealias F = HistoryFixtures

    // MARK: JSON

    @Test("JSON: one object with the summary, every day, the runs and the problem rows")
    func jsonDays() throws {
        let text = try F.render(.json) { try F.feedDays($0) }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["report"] as? String == "history")
        #expect(object["from"] as? String == "2026-01-11")
        #expect(object["to"] as? String == "2026-01-13")
        #expect(object["time_zone"] as? String == "Asia/Shanghai")
        #expect(object["generated_at"] as? String == "2026-01-14T08:00:00+08:00")
        let summary = try #require(object["summary"] as? [String: Int])
        #expect(summary == ["days": 3, "days_without_run": 1, "runs": 3, "sent": 17, "failed": 4, "retry_pending": 2,
                            "sending": 1, "skipped": 2, "legacy_sent": 1, "legacy_not_sent": 1, "undelivered": 8, "bounced": 0])
        let days = try #require(object["days"] as? [[String: Any]])
        #expect(days.map { $0["date"] as? String } == ["2026-01-11", "2026-01-12", "2026-01-13"])
        #expect(days[2]["undelivered"] as? Int == 5)
        #expect(days[2]["failed_runs"] as? Int == 1)
        let reasons = try #require(days[2]["skipped_by_reason"] as? [[String: Any]])
        #expect(reasons.first?["reason"] as? String == "emergency email: missing @")
        #expect(reasons.first?["count"] as? Int == 2)
        #expect((days[0]["skipped_by_reason"] as? [Any])?.isEmpty == true)
        let runs = try #require(object["runs"] as? [[String: Any]])
        #expect(runs.count == 2)
        #expect(runs[0]["started_at"] as? String == "2026-01-11T09:00:00+08:00")
        #expect(runs[0]["duration_seconds"] as? Double == 3)
        #expect(runs[1]["finished_at"] is NSNull)
        #expect(runs[1]["host"] as? String == "管理机")
        let problems = try #require(object["problems"] as? [[String: Any]])
        #expect(problems.count == 4)
        #expect(problems[0]["detail"] as? String == F.problems[0].detail)
        #expect(problems[1]["next_attempt_at"] as? String == "2026-01-11T09:35:00+08:00")
        #expect(problems[2]["name"] as? String == F.hostileName)
        #expect(problems[3]["display_status"] as? String == "stuck")
        #expect(problems[3]["claim_alive"] as? Bool == false)
        let missDays = try #require(object["miss_days"] as? [[String: Int]])
        #expect(missDays.first == ["m": 2, "count": 21, "sent": 15, "not_sent": 6])
    }

    @Test("JSON: the per-user report has the user, streaks and notifications, and no days or runs")
    func jsonUser() throws {
        let text = try F.render(.json) { try F.feedUser($0) }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["report"] as? String == "user_history")
        #expect((object["user"] as? [String: String])?["contact_email"] == "z***@example.com")
        #expect(object["days"] == nil)
        #expect(object["runs"] == nil)
        let streaks = try #require(object["streaks"] as? [[String: Any]])
        #expect(streaks[0]["outcome"] as? String == "notified")
        #expect(streaks[0]["notified_miss_days"] as? Int == 2)
        #expect(streaks[1]["next_check_in_date"] is NSNull)
        #expect(streaks[1]["last_error"] as? String == "550 no such user")
        let notifications = try #require(object["notifications"] as? [[String: Any]])
        #expect(notifications[0]["sent_at"] as? String == "2026-01-11T09:00:02+08:00")
        #expect(notifications[0]["email_sent"] as? Bool == true)
    }

    @Test("JSON: empty sections are empty arrays")
    func jsonEmpty() throws {
        let text = try F.render(.json) { sink in
            try sink.begin(F.header(), overview: HistoryOverview(days: [], skips: [], missDays: []))
            for section in [HistorySection.runs, .problems] { try sink.beginSection(section); try sink.endSection(section) }
            try sink.end()
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect((object["runs"] as? [Any])?.isEmpty == true)
        #expect((object["problems"] as? [Any])?.isEmpty == true)
    }

    // MARK: CSV


    @Test("CSV: BOM, one header, one record per line with its kind; quoted and formula-safe")
    func csv() throws {
        let text = try F.render(.csv) { try F.feedDays($0) }
        #expect(text.hasPrefix("\u{FEFF}record,date,"))
        #expect(text.contains("\r\n"))
        let rows = CSVText.rows(text)
        let header = rows[0]
        #expect(header == HistoryCSVWriter.columns)
        #expect(rows.allSatisfy { $0.count == header.count })
        func records(_ kind: String) -> [[String: String]] {
            rows.dropFirst().filter { $0[0] == kind }.map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        }
        let days = records("day")
        #expect(days.map { $0["date"] } == ["2026-01-11", "2026-01-12", "2026-01-13"])
        #expect(days[0]["sent"] == "12")
        #expect(days[0]["retry_pending"] == "2")
        #expect(days[2]["legacy_not_sent"] == "1")
        #expect(records("skipped").first?["reason"] == "emergency email: missing @")
        let runs = records("run")
        #expect(runs.map { $0["run_status"] } == ["completed", "failed"])
        #expect(runs[0]["duration_seconds"] == "3.000")
        #expect(runs[1]["reason"] == "database unreachable: connection lost")
        let notifications = records("notification")
        #expect(notifications.count == 4)
        #expect(notifications[0]["reason"] == F.problems[0].detail)
        #expect(notifications[1]["name"] == "名字很长很长很长的用户")
        #expect(notifications[2]["name"] == F.hostileName)
        #expect(notifications[3]["status"] == "sending")
        #expect(records("miss_days").map { $0["consecutive_miss_days"] } == ["2", "4", "9"])
        // A value starting with = + - @ is defused.
        #expect(Escaping.csv("=1+1") == "'=1+1")
    }

    @Test("CSV: the per-user report has user, streak and notification records")
    func csvUser() throws {
        let rows = CSVText.rows(try F.render(.csv) { try F.feedUser($0) })
        let kinds = rows.dropFirst().map { $0[0] }
        #expect(kinds == ["user", "streak", "streak", "notification", "notification", "miss_days", "miss_days", "miss_days"])
        let header = rows[0]
        let streak = Dictionary(uniqueKeysWithValues: zip(header, rows[3]))
        #expect(streak["outcome"] == "not_sent")
        #expect(streak["last_check_in_date"] == "2026-01-08")
        #expect(streak["status"] == "failed")
    }

    // MARK: Table

    @Test("table: every line fits 80 columns, columns line up with wide characters, totals last")
    func table() throws {
        let text = try F.render(.table) { try F.feedDays($0) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast()
        for line in lines { #expect(DisplayWidth.of(line) <= 80, "\(line)") }
        #expect(lines.last?.hasPrefix("        ") == true || lines.last?.hasPrefix("Totals:") == true)
        #expect(text.contains("Totals: sent 17, failed 4, bounced 0, retry 2, sending 1, skipped 2,"))
        // Problem rows: the RECIPIENT and M columns start at the same display column, whatever the name.
        let rows = lines.filter { $0.hasPrefix("2026-01-1") && $0.contains("***@") }
        #expect(rows.count == 4)
        let recipientColumns = Set(rows.map { DisplayWidth.of(String($0[..<$0.range(of: "z***@")!.lowerBound])) })
        #expect(recipientColumns == [10 + 2 + 7 + 2 + 8 + 2 + 10 + 2])
        #expect(Set(rows.map(DisplayWidth.of)).count == 1)
        // The list was cut at 2 per day; the rest is counted.
        #expect(text.contains("… and 1 more on 2026-01-11"))
        #expect(text.contains("… and 2 more on 2026-01-13"))
        #expect(text.contains("session gone: the next run resends it"))
        #expect(text.contains("2026-01-12     0"))
        #expect(lines.contains { $0.hasPrefix("2026-01-12") && $0.hasSuffix("no run") })
        // The long reply wraps under its row instead of being lost.
        #expect(text.contains("in virtual mailbox table"))
    }

    @Test("table: the per-user report lists streaks and notifications in 80 columns")
    func tableUser() throws {
        let text = try F.render(.table) { try F.feedUser($0) }
        for line in text.split(separator: "\n") { #expect(DisplayWidth.of(String(line)) <= 80, "\(line)") }
        #expect(text.hasPrefix("History of user 0f8a3c2e-1111-4000-8000-000000000001, name 张三,\n"))
        #expect(text.contains("contact z***@example.com, 2026-01-11 to 2026-01-13 (Asia/Shanghai),\n"))
        #expect(text.contains("2026-01-03  2026-01-08       4  notified 2026-01-06 at 09:00:02, m 2"))
        #expect(text.contains("2026-01-08  -                5  not sent: failed (2 rows)"))
        #expect(text.contains("message id <20260111.abc@notifier-1>"))
    }

    @Test("table: detail text wraps at spaces within the width", arguments: [20, 33, 68])
    func wrap(width: Int) {
        let text = "550 5.1.1 <名字@example.com>: Recipient address rejected: User unknown in virtual mailbox table"
        let lines = TextColumns.wrap(text, width: width, maxLines: 10)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= width })
        #expect(lines.joined(separator: " ") == text)
        let cut = TextColumns.wrap(text, width: width, maxLines: 1)
        #expect(cut.count == 1)
        #expect(cut[0].hasSuffix("…"))
        #expect(DisplayWidth.of(cut[0]) <= width)
    }

    // MARK: HTML

    @Test("HTML: one self-contained page, no scripts or external assets, every database value escaped")
    func html() throws {
        let page = try F.render(.html) { try F.feedDays($0) }
        #expect(page.hasPrefix("<!DOCTYPE html>\n<html lang=\"zh-CN\">"))
        #expect(page.contains("<meta charset=\"utf-8\">"))
        #expect(page.hasSuffix("</html>\n"))
        let lower = page.lowercased()
        for forbidden in ["<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import", "javascript:", "http://", "https://"] {
            let hits = lower.components(separatedBy: forbidden).count - 1
            // The only URL allowed is the SVG namespace, which is an identifier, not a fetch.
            let allowed = forbidden == "http://" ? SVGDocument.all(in: page).count : 0
            #expect(hits == allowed, "\(forbidden)")
        }
        #expect(page.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"))
        #expect(page.contains("554 &lt;b&gt;spam&lt;/b&gt; &amp; &quot;x&quot;"))
        #expect(!page.contains("<b>spam"))
        #expect(page.contains("WenQuanYi Micro Hei"))
        #expect(page.contains("… and 2 more on 2026-01-13"))
    }

    @Test("HTML: two charts whose bars carry the day's and m's numbers, in proportion")
    func htmlCharts() throws {
        let page = try F.render(.html) { try F.feedDays($0) }
        let svgs = SVGDocument.all(in: page).compactMap(SVGDocument.init)
        #expect(svgs.count == 2)
        let mails = svgs[0], missDays = svgs[1]
        #expect(mails.root["id"] == "chart-mails")
        #expect(mails.bars.map { $0.attributes["data-day"] } == ["2026-01-11", "2026-01-12", "2026-01-13"])
        #expect(mails.bars.map { $0.attributes["data-sent"] } == ["12", "0", "5"])
        #expect(mails.bars.map { $0.attributes["data-failed"] } == ["3", "0", "5"])
        #expect(mails.bars[0].title.hasPrefix("2026-01-11: 12 sent, 3 not delivered"))
        #expect(missDays.root["id"] == "chart-miss-days")
        // Every m from 2 to 9, zeros included.
        #expect(missDays.bars.map { $0.attributes["data-m"] } == (2...9).map(String.init))
        #expect(missDays.bars.map { $0.attributes["data-count"] } == ["21", "0", "2", "0", "0", "0", "0", "4"])
        for svg in svgs {
            let unit = Double(svg.plot["height"]!)! / Double(svg.texts.compactMap(Int.init).max()!)
            for bar in svg.bars {
                let total = bar.segments.map { Double($0["height"]!)! }.reduce(0, +)
                let value = bar.segments.map { Double($0["data-value"]!)! }.reduce(0, +)
                #expect(abs(total - value * unit) < 0.03)
            }
        }
    }

    @Test("HTML: the per-user page has the user, streaks and notifications")
    func htmlUser() throws {
        let page = try F.render(.html) { try F.feedUser($0) }
        #expect(page.contains("<section id=\"user\">"))
        #expect(page.contains("<section id=\"streaks\">"))
        #expect(page.contains("<section id=\"notifications\">"))
        #expect(!page.contains("<section id=\"runs\">"))
        #expect(SVGDocument.all(in: page).count == 2)
    }
}
