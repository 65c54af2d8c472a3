import Foundation
import Testing
import TestSupport
@testable import Values
@testable import Store
@testable import Reports
@testable import Delivery

/// Escalation for operators on real PostgreSQL (docs/escalation.md): the history report's
/// figures per alert date in every format, the metrics' counters and gauges, `check`'s line, and
/// retention of the streaks — over streaks of known fate (`EscalationHistoryScenario`).
@Suite("Escalation in the history report, the metrics, check and retention", .enabled(if: TestEnvironment.enabled))
struct EscalationHistoryIntegrationTests {
    typealias S = EscalationHistoryScenario
    static let period = ["report", "--from", "2026-01-11", "--to", "2026-01-13"]
    static let days = ["2026-01-11", "2026-01-12", "2026-01-13"]

    static func report(_ db: TestDatabase, _ format: String) throws -> String {
        let result = try NotifierProcess.run(Self.period + ["--format", format], environment: NotifierProcess.environment(database: db))
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    /// `seconds` as the CSV and JSON give it.
    static func whole(_ seconds: Double) -> String { String(Int(seconds.rounded())) }

    @Test("the report per alert date in JSON, CSV, table and HTML: time to the first acknowledgement, escalations, unheard, outcomes, totals")
    func everyFormat() throws {
        let db = try TestDatabase()
        _ = try S(db)
        let before = try db.dump()

        // JSON: every day of the period, and the totals.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(try Self.report(db, "json").utf8)) as? [String: Any])
        let escalation = try #require(object["escalation"] as? [String: Any])
        let days = try #require(escalation["days"] as? [[String: Any]])
        #expect(days.map { $0["date"] as? String } == Self.days)
        let keys = ["alerted", "acknowledged", "escalated", "unheard", "outcome_ok", "outcome_unreachable"]
        for day in days {
            let date = day["date"] as? String ?? ""
            #expect(keys.map { day[$0] as? Int } == S.counts[date]!.map { $0 }, "\(date)")
            if let (median, p90) = S.times[date]! {
                #expect(day["ack_median_seconds"] as? Int == Int(median) && day["ack_p90_seconds"] as? Int == Int(p90), "\(date)")
            } else {
                #expect(day["ack_median_seconds"] is NSNull && day["ack_p90_seconds"] is NSNull, "\(date)")
            }
        }
        let totals = try #require(escalation["totals"] as? [String: Any])
        #expect(keys.map { totals[$0] as? Int } == S.totals.map { $0 })
        #expect(totals["ack_median_seconds"] as? Int == Int(S.totalTimes.0) && totals["ack_p90_seconds"] as? Int == Int(S.totalTimes.1))

        // CSV: a record per day with streaks, and the total.
        let rows = CSVText.rows(try Self.report(db, "csv"))
        let header = rows[0]
        let records = rows.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        let csvDays = records.filter { $0["record"] == "escalation_day" }
        #expect(csvDays.map { $0["date"] } == Self.days)
        for day in csvDays {
            let date = day["date"]! ?? ""
            #expect(keys.map { day[$0] ?? nil } == S.counts[date]!.map(String.init), "\(date)")
            #expect(day["ack_median_seconds"] == (S.times[date]!.map { Self.whole($0.0) } ?? ""), "\(date)")
            #expect(day["ack_p90_seconds"] == (S.times[date]!.map { Self.whole($0.1) } ?? ""), "\(date)")
        }
        let total = try #require(records.first { $0["record"] == "escalation_total" })
        #expect(keys.map { total[$0] ?? nil } == S.totals.map(String.init))
        #expect(total["ack_median_seconds"] == "4500" && total["ack_p90_seconds"] == "12240")

        // Table: h:mm:ss; a day without acknowledgements shows `-`.
        let table = try Self.report(db, "table").split(separator: "\n").map(String.init)
        let title = try #require(table.firstIndex { $0.hasPrefix("DATE") && $0.contains("UNHEARD") })
        func cells(_ line: String) -> [String] { line.split(separator: " ").map(String.init) }
        #expect(cells(table[title + 1]) == ["2026-01-11", "3", "3", "0:30:00", "3:18:00", "1", "0", "1", "1"])
        #expect(cells(table[title + 2]) == ["2026-01-12", "2", "0", "-", "-", "1", "1", "0", "0"])
        #expect(cells(table[title + 3]) == ["2026-01-13", "2", "1", "2:00:00", "2:00:00", "1", "0", "0", "0"])
        #expect(cells(table[title + 4]) == ["TOTAL", "7", "4", "1:15:00", "3:24:00", "3", "1", "1", "1"])

        // HTML: the cards, the table and both charts, whose bars carry each day's numbers.
        let page = try Self.report(db, "html")
        #expect(page.contains("<dt>Time to acknowledge (median)</dt><dd>1:15:00</dd>"))
        #expect(page.contains("<dt>Unheard</dt><dd>1</dd>"))
        #expect(page.contains("<tr data-day=\"2026-01-12\" class=\"warn\">"))
        let svgs = SVGDocument.all(in: page).compactMap(SVGDocument.init)
        let time = try #require(svgs.first { $0.root["id"] == "chart-acknowledgement" })
        let steps = try #require(svgs.first { $0.root["id"] == "chart-escalations" })
        #expect(time.bars.map { $0.attributes["data-day"] } == Self.days)
        #expect(time.bars.map { $0.attributes["data-median-seconds"] } == ["1800", "", "7200"])
        #expect(time.bars.map { $0.attributes["data-p90-seconds"] } == ["11880", "", "7200"])
        // In minutes (the longest 90th percentile is 3.3 h): the median below, the rest up to the 90th percentile above.
        #expect(time.bars.map { $0.segments.map { $0["data-value"]! } } == [["30", "168"], ["0", "0"], ["120", "0"]])
        #expect(steps.bars.map { $0.attributes["data-escalated"] } == ["1", "1", "1"])
        #expect(steps.bars.map { $0.segments.map { $0["data-value"]! } } == [["1", "0"], ["0", "1"], ["1", "0"]])
        #expect(steps.bars.map { $0.attributes["data-outcome-ok"] } == ["1", "0", "0"])

        #expect(try db.dump() == before, "the report writes nothing")
    }

    @Test("a report of one user counts that user's streaks only")
    func oneUser() throws {
        let db = try TestDatabase()
        let scenario = try S(db)
        let result = try NotifierProcess.run(Self.period + ["--format", "json", "--user", scenario.users["c"]!],
                                             environment: NotifierProcess.environment(database: db))
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let totals = try #require((object["escalation"] as? [String: Any])?["totals"] as? [String: Any])
        #expect(["alerted", "acknowledged", "ack_median_seconds", "escalated", "unheard", "outcome_unreachable"].map { totals[$0] as? Int }
                == [1, 1, 14400, 1, 0, 1])
    }

    @Test("metrics: the steps counted as made, the open and unheard streaks not heard since, the oldest")
    func metrics() throws {
        let db = try TestDatabase()
        let scenario = try S(db)
        let figures = try Housekeeping.figures(db.connection, since: CalendarDate(parsing: "2026-01-06")!)
        // Escalated: h, i, c, d, g; unheard: h, i, d. Open now: c (its acknowledgement taken back) and g;
        // unheard now: d alone (h checked in, i was acknowledged since).
        #expect(figures.escalation.escalated == 5 && figures.escalation.declaredUnheard == 3)
        #expect(figures.escalation.open == 2 && figures.escalation.unheard == 1)
        let oldest = try #require(figures.escalation.oldestUnheard)
        #expect(oldest.userID == scenario.users["d"] && oldest.alertDate == CalendarDate(parsing: "2026-01-12"))
        #expect(oldest.since == S.sent("2026-01-12").addingTimeInterval(6 * 3600))
        let text = MetricsFile.render(figures, now: Date())
        for line in ["sileme_notifier_escalations_total 5", "sileme_notifier_unheard_total 3", "sileme_notifier_escalations_open 2",
                     "sileme_notifier_unheard_streaks 1", "sileme_notifier_unheard_oldest_timestamp_seconds \(Int(oldest.since.timeIntervalSince1970))"] {
            #expect(text.contains(line + "\n"), "\(line)")
        }
    }

    @Test("check: warns of the unheard streak with the oldest, its exit status unchanged; ok once it is heard")
    func check() throws {
        let db = try TestDatabase()
        let scenario = try S(db)
        let env = try NotifierProcess.environment(database: db, ["ESCALATE_AFTER": "3h"])
        func line() throws -> (status: Int32, line: String) {
            let result = try NotifierProcess.run(["check"], environment: env)
            let line = try #require(result.stderr.split(separator: "\n").first { $0.contains(" escalation: ") }, "\(result.stderr)")
            return (result.status, String(line))
        }
        let warned = try line()
        #expect(warned.line.hasPrefix("warn escalation: ESCALATE_AFTER 3h; 1 streak unheard: nobody answered the alert or its escalation; "
                                      + "the oldest: user \(scenario.users["d"]!)'s alert of 2026-01-12, unheard since 2026-01-12T07:00:00Z ("),
                "\(warned.line)")
        #expect(warned.line.hasSuffix("; 2 escalated streaks waiting for an answer"), "\(warned.line)")
        #expect(warned.status == 0, "a warning leaves the exit status alone")
        try db.checkIn(scenario.users["d"]!, "2026-01-14")
        #expect(try line().line == "ok   escalation: ESCALATE_AFTER 3h; 2 escalated streaks waiting for an answer; none unheard")
    }

    @Test("retention deletes the streaks alerted before the cutoff in batches, keeps one waiting for a step a while; the counters stay")
    func retention() throws {
        let db = try TestDatabase()
        _ = try S(db)
        let connection = db.connection
        let tally = try db.query("SELECT escalated, unheard FROM sileme.escalation_tally")
        func dates() throws -> [String?] { try db.query("SELECT alert_date::text FROM sileme.escalations ORDER BY 1").map { $0[0] } }
        let deleted = try Housekeeping.deleteOlder(connection, than: CalendarDate(parsing: "2026-01-12")!, batch: 2)
        // h, i (01-10) and a, b (01-11), two alerts each with c's; c waits for its unheard step: kept.
        #expect(deleted.escalations == 4 && deleted.logs == 10)
        #expect(try dates() == ["2026-01-11", "2026-01-12", "2026-01-12", "2026-01-13", "2026-01-13"])
        #expect(try db.query("SELECT escalated, unheard FROM sileme.escalation_tally") == tally)
        #expect(try EscalationFigures.read(connection).escalated == 5)
        #expect(try Housekeeping.deleteOlder(connection, than: CalendarDate(parsing: "2026-01-12")!).escalations == 0)
        // 21 days past the cutoff a waiting streak goes too (escalation may be off: no step would come);
        // g, alerted on the 21st day before it, still waits.
        let later = try Housekeeping.deleteOlder(connection, than: CalendarDate(parsing: "2026-02-03")!, batch: 3)
        #expect(later.escalations == 4)
        #expect(try dates() == ["2026-01-13"])
        #expect(try db.query("SELECT stage FROM sileme.escalations") == [["escalated"]])
    }
}
