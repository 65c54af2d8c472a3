import Foundation
import Testing
import TestSupport
@testable import Values
@testable import Output
@testable import Reports

/// `sileme-notifier report`: the history per day and per user, in every format, run as the real
/// executable against a week of history written into PostgreSQL (`HistoryScenario`).
@Suite("History report on real PostgreSQL", .enabled(if: TestEnvironment.enabled))
struct HistoryIntegrationTests {
    static let week = ["report", "--from", "2026-01-07", "--to", "2026-01-13"]

    static func report(_ db: TestDatabase, _ arguments: [String], _ overrides: [String: String?] = [:]) throws -> NotifierProcess.Result {
        try NotifierProcess.run(arguments, environment: NotifierProcess.environment(database: db, overrides))
    }

    static func json(_ result: NotifierProcess.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }


    // MARK: Per day

    @Test("JSON per day: runs, sent, failed with the reply, retries, stuck claims, skips by reason, legacy rows — and nothing written")
    func jsonPerDay() throws {
        let db = try TestDatabase()
        let scenario = try HistoryScenario(db)
        let before = try db.dump()
        let result = try Self.report(db, Self.week + ["--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try db.dump() == before)
        #expect(result.stderr.contains("report 2026-01-07 to 2026-01-13: 7 sent, 2 failed, 1 retry pending, 2 sending, 3 skipped, 5 runs, 2 days without a run"))
        let object = try Self.json(result)
        #expect(object["report"] as? String == "history")
        #expect(object["time_zone"] as? String == "Asia/Shanghai")
        #expect(object["threshold_days"] as? Int == 2)
        #expect(object["catch_up_days"] as? Int == 7)
        #expect(object["full_emails"] as? Bool == false)
        #expect(object["summary"] as? [String: Int] == [
            "days": 7, "days_without_run": 2, "runs": 5, "sent": 7, "failed": 2, "retry_pending": 1, "sending": 2,
            "skipped": 3, "legacy_sent": 1, "legacy_not_sent": 1, "undelivered": 6, "bounced": 0,
        ])

        let days = try #require(object["days"] as? [[String: Any]])
        #expect(days.count == 7)
        for (day, (date, counts)) in zip(days, HistoryScenario.days) {
            #expect(day["date"] as? String == date)
            let keys = ["runs", "sent", "failed", "retry_pending", "sending", "skipped", "legacy_sent", "legacy_not_sent"]
            #expect(keys.map { day[$0] as? Int } == counts.map { $0 }, "\(date)")
            #expect(day["undelivered"] as? Int == counts[2] + counts[3] + counts[4] + counts[7])
        }
        func reasons(_ day: [String: Any]) -> [String] {
            (day["skipped_by_reason"] as? [[String: Any]] ?? []).map { "\($0["count"] as? Int ?? -1) \($0["reason"] as? String ?? "")" }
        }
        #expect(reasons(days[2]) == ["1 emergency email: missing domain"])
        #expect(reasons(days[5]) == ["1 emergency email: missing domain", "1 name is empty after cleaning"])
        #expect(reasons(days[0]).isEmpty)
        #expect(days[3]["failed_runs"] as? Int == 1)
        #expect(days[6]["running_runs"] as? Int == 1)

        let runs = try #require(object["runs"] as? [[String: Any]])
        #expect(runs.map { $0["run_date"] as? String } == ["2026-01-07", "2026-01-09", "2026-01-10", "2026-01-12", "2026-01-13"])
        #expect(runs[0]["mode"] as? String == "daemon")
        #expect(runs[0]["host"] as? String == "notifier-1")
        #expect(runs[0]["started_at"] as? String == "2026-01-07T09:00:00+08:00")
        #expect(runs[0]["finished_at"] as? String == "2026-01-07T09:00:03+08:00")
        #expect(runs[0]["duration_seconds"] as? Double == 3.5)
        #expect(runs[0]["status"] as? String == "completed")
        #expect(runs[0]["due"] as? Int == 2)
        #expect(runs[0]["sent"] as? Int == 2)
        #expect(runs[2]["mode"] as? String == "run-now")
        #expect(runs[2]["status"] as? String == "failed")
        #expect(runs[2]["error"] as? String == "database unreachable: connection to w***@example.com's server lost")
        #expect(runs[4]["status"] as? String == "running")
        #expect(runs[4]["finished_at"] is NSNull)
        #expect(runs[4]["duration_seconds"] is NSNull)

        let problems = try #require(object["problems"] as? [[String: Any]])
        let users = scenario.users
        #expect(problems.map { "\($0["date"]!) \($0["display_status"]!) \($0["user_id"]!)" } == [
            "2026-01-09 failed \(users["d"]!)", "2026-01-10 stuck \(users["s"]!)", "2026-01-10 retry \(users["d"]!)",
            "2026-01-13 failed \(users["x"]!)", "2026-01-13 sending \(users["y"]!)",
        ])
        let failed = problems[0]
        #expect(failed["status"] as? String == "failed")
        #expect(failed["name"] as? String == "王五")
        #expect(failed["recipient"] as? String == "w***@example.com")
        #expect(failed["contact_email"] as? String == "w***@example.com")
        #expect(failed["consecutive_miss_days"] as? Int == 2)
        #expect(failed["last_check_in_date"] as? String == "2026-01-06")
        #expect(failed["attempts"] as? Int == 1)
        #expect(failed["message_id"] as? String == HistoryScenario.messageID("d", "2026-01-09"))
        #expect(failed["claimed_at"] as? String == "2026-01-09T09:00:01+08:00")
        #expect(failed["detail"] as? String
                == HistoryScenario.failedReply.replacingOccurrences(of: "wang@example.com", with: "w***@example.com"))
        #expect(problems[1]["status"] as? String == "sending")
        #expect(problems[1]["claim_alive"] as? Bool == false)
        #expect(problems[1]["claimed_by"] as? String == "notifier-1:100")
        #expect(problems[2]["next_attempt_at"] as? String == "2026-01-10T09:15:00+08:00")
        #expect(problems[2]["attempts"] as? Int == 3)
        #expect(problems[2]["detail"] as? String == "451 4.7.1 Try again later")
        #expect(problems[3]["name"] as? String == HistoryScenario.hostileName)
        #expect(problems[3]["detail"] as? String == HistoryScenario.htmlReply)
        #expect(problems[4]["claim_alive"] as? Bool == true)

        let missDays = try #require(object["miss_days"] as? [[String: Int]])
        #expect(missDays.map { $0["m"]! } == HistoryScenario.missDays.keys.sorted())
        for bucket in missDays {
            let (sent, notSent) = HistoryScenario.missDays[bucket["m"]!]!
            #expect(bucket["sent"] == sent)
            #expect(bucket["not_sent"] == notSent)
            #expect(bucket["count"] == sent + notSent)
        }
    }

    @Test("CSV per day: BOM, one kind of record per line, checked field by field")
    func csvPerDay() throws {
        let db = try TestDatabase()
        let scenario = try HistoryScenario(db)
        let result = try Self.report(db, Self.week + ["--format", "csv"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("\u{FEFF}record,date,runs,sent,"))
        let rows = CSVText.rows(result.stdout)
        let header = rows[0]
        #expect(rows.allSatisfy { $0.count == header.count })
        func records(_ kind: String) -> [[String: String]] {
            rows.dropFirst().filter { $0.first == kind }.map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        }
        let days = records("day")
        #expect(days.count == 7)
        for (day, (date, counts)) in zip(days, HistoryScenario.days) {
            #expect(day["date"] == date)
            let keys = ["runs", "sent", "failed", "retry_pending", "sending", "skipped", "legacy_sent", "legacy_not_sent"]
            #expect(keys.map { day[$0] } == counts.map { String($0) }, "\(date)")
            #expect(day["user_id"] == "")
        }
        #expect(records("skipped").map { "\($0["date"]!) \($0["skipped"]!) \($0["reason"]!)" } == [
            "2026-01-09 1 emergency email: missing domain", "2026-01-12 1 emergency email: missing domain",
            "2026-01-12 1 name is empty after cleaning",
        ])
        let runs = records("run")
        #expect(runs.count == 5)
        #expect(runs[1]["started_at"] == "2026-01-09T09:00:00+08:00")
        #expect(runs[1]["duration_seconds"] == "5.000")
        #expect(runs[1]["skipped"] == "1")
        #expect(runs[2]["run_status"] == "failed")
        #expect(runs[2]["reason"] == "database unreachable: connection to w***@example.com's server lost")
        #expect(runs[4]["finished_at"] == "")
        let notifications = records("notification")
        #expect(notifications.map { $0["user_id"] } == ["d", "s", "d", "x", "y"].map { scenario.users[$0] })
        #expect(notifications[0]["reason"]?.hasPrefix("550 5.1.1 <w***@example.com>: Recipient address rejected") == true)
        #expect(notifications[0]["message_id"] == HistoryScenario.messageID("d", "2026-01-09"))
        #expect(notifications[2]["next_attempt_at"] == "2026-01-10T09:15:00+08:00")
        #expect(notifications[3]["name"] == HistoryScenario.hostileName)
        #expect(notifications[3]["reason"] == HistoryScenario.htmlReply)
        #expect(records("miss_days").map { $0["consecutive_miss_days"]! } == ["0", "2", "3", "4", "5", "6"])
        #expect(records("miss_days")[1]["sent"] == "5")
        #expect(records("miss_days")[1]["not_sent"] == "5")
    }

    @Test("table: 80 columns, aligned with Chinese names, ends with the totals")
    func table() throws {
        let db = try TestDatabase()
        _ = try HistoryScenario(db)
        let result = try Self.report(db, Self.week)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        for line in lines { #expect(DisplayWidth.of(line) <= 80, "\(line)") }
        // The day table: numbers end at the same column, notes start at the same column.
        let title = try #require(lines.firstIndex { $0.hasPrefix("DATE        RUNS") })
        let dayRows = Array(lines[(title + 1)...].prefix { !$0.isEmpty })
        #expect(dayRows.count == 7)
        for row in dayRows {
            let note = row.dropFirst(68).trimmingCharacters(in: .whitespaces)
            #expect(DisplayWidth.of(row) == (note.isEmpty ? 68 : 70 + DisplayWidth.of(note)), "\(row)")
        }
        #expect(dayRows[1].hasSuffix("  no run"))
        #expect(dayRows[3].hasSuffix("  run failed"))
        #expect(dayRows[6].hasSuffix("  running"))
        // The problem rows: whatever the name (Chinese, long, hostile), RECIPIENT starts at column 43.
        let problemRows = lines.filter { $0.contains("***@") && $0.hasPrefix("2026-") }
        #expect(problemRows.count == 5)
        for row in problemRows {
            let at = try #require(row.range(of: #"[a-z]\*\*\*@"#, options: .regularExpression))
            #expect(DisplayWidth.of(String(row[..<at.lowerBound])) == 43, "\(row)")
        }
        #expect(problemRows.contains { $0.contains("王五") && $0.contains("failed") })
        #expect(result.stdout.contains("            550 5.1.1 <w***@example.com>: Recipient address rejected: User"))
        #expect(result.stdout.contains("session gone: the next run resends it"))
        #expect(result.stdout.contains("next attempt 01-10 09:15 · 451 4.7.1 Try again later"))
        #expect(lines.suffix(2) == ["Totals: sent 7, failed 2, bounced 0, retry 1, sending 2, skipped 3,",
                                    "        legacy 2 (1 sent, 1 not sent)"])
        #expect(lines.contains("Runs: 5 on 7 days; 2 days without a run"))
    }

    // MARK: Per user

    @Test("per user: streaks with L, when they were notified and with which m; every mail with its address and Message-ID")
    func perUser() throws {
        let db = try TestDatabase()
        let scenario = try HistoryScenario(db)
        let users = scenario.users
        let period = ["report", "--from", "2026-01-01", "--to", "2026-01-13", "--format", "json"]

        let zhang = try Self.json(try Self.report(db, period + ["--user", users["a"]!.uppercased()]))
        #expect(zhang["report"] as? String == "user_history")
        #expect(zhang["user"] as? [String: String] == ["user_id": users["a"]!, "name": "张三", "contact_email": "z***@example.com"])
        let streaks = try #require(zhang["streaks"] as? [[String: Any]])
        #expect(streaks.count == 2)  // the one-day streaks 01-08 → 01-09 → 01-10 missed nothing
        #expect(streaks[0]["last_check_in_date"] as? String == "2026-01-03")
        #expect(streaks[0]["next_check_in_date"] as? String == "2026-01-08")
        #expect(streaks[0]["missed_days"] as? Int == 4)
        #expect(streaks[0]["outcome"] as? String == "notified")
        #expect(streaks[0]["notified_on"] as? String == "2026-01-06")
        #expect(streaks[0]["notified_miss_days"] as? Int == 2)
        #expect(streaks[0]["sent_at"] as? String == "2026-01-06T09:00:02+08:00")
        #expect(streaks[0]["message_id"] as? String == HistoryScenario.messageID("a", "2026-01-06"))
        #expect(streaks[1]["last_check_in_date"] as? String == "2026-01-10")
        #expect(streaks[1]["next_check_in_date"] is NSNull)
        #expect(streaks[1]["missed_days"] as? Int == 3)
        #expect(streaks[1]["notified_on"] as? String == "2026-01-12")
        let mails = try #require(zhang["notifications"] as? [[String: Any]])
        #expect(mails.map { $0["date"] as? String } == ["2026-01-06", "2026-01-12"])
        #expect(mails.allSatisfy { $0["recipient"] as? String == "z***@example.com" && $0["email_sent"] as? Bool == true })
        #expect(mails[1]["message_id"] as? String == HistoryScenario.messageID("a", "2026-01-12"))
        #expect(mails[1]["attempts"] as? Int == 1)

        let wang = try Self.json(try Self.report(db, period + ["--user", users["d"]!]))
        let open = try #require((wang["streaks"] as? [[String: Any]])?.first)
        #expect(open["outcome"] as? String == "not_sent")
        #expect(open["missed_days"] as? Int == 7)
        #expect(open["rows"] as? Int == 2)
        #expect(open["last_status"] as? String == "retry")
        #expect(open["last_error"] as? String == "451 4.7.1 Try again later")
        #expect((wang["notifications"] as? [[String: Any]])?.map { $0["status"] as? String } == ["failed", "retry"])

        let sun = try Self.json(try Self.report(db, period + ["--user", users["g"]!]))
        #expect((sun["streaks"] as? [[String: Any]])?.map { $0["outcome"] as? String } == ["no_record", "no_record"])

        let table = try Self.report(db, ["report", "--from", "2026-01-01", "--to", "2026-01-13", "--user", users["a"]!])
        #expect(table.status == 0)
        for line in table.stdout.split(separator: "\n") { #expect(DisplayWidth.of(String(line)) <= 80, "\(line)") }
        #expect(table.stdout.contains("2026-01-03  2026-01-08       4  notified 2026-01-06 at 09:00:02, m 2"))
        #expect(table.stdout.contains("            message id <\(HistoryScenario.messageID("a", "2026-01-12"))>\n"))
        let csv = CSVText.rows(try Self.report(db, ["report", "--from", "2026-01-01", "--to", "2026-01-13", "--user", users["d"]!,
                                                "--format", "csv"]).stdout)
        #expect(csv.dropFirst().map { $0[0] } == ["user", "streak", "notification", "notification", "miss_days", "miss_days"])
    }

    // MARK: Masking

    @Test("emails are masked in every format, also inside replies and errors; --full-emails shows the contacts")
    func masking() throws {
        let db = try TestDatabase()
        let scenario = try HistoryScenario(db)
        for format in ["table", "json", "csv", "html"] {
            let masked = try Self.report(db, Self.week + ["--format", format])
            #expect(masked.status == 0)
            for address in ["wang@example.com", "evil@example.com", "zhou@example.com", "stuck@example.com"] {
                #expect(!masked.stdout.contains(address), "\(format): \(address)")
            }
            let user = try Self.report(db, Self.week + ["--format", format, "--user", scenario.users["d"]!])
            #expect(!user.stdout.contains("wang@example.com"), "\(format)")
        }
        let full = try Self.json(try Self.report(db, Self.week + ["--format", "json", "--full-emails"]))
        #expect(full["full_emails"] as? Bool == true)
        let problems = try #require(full["problems"] as? [[String: Any]])
        #expect(problems[0]["contact_email"] as? String == "wang@example.com")
        #expect(problems[0]["recipient"] as? String == "w***@example.com")  // stored masked: never more
        #expect((problems[0]["detail"] as? String)?.contains("wang@example.com") == true)
    }

    // MARK: HTML

    @Test("HTML: each bar's height is its number on one scale (zero is zero) and carries the day's numbers")
    func htmlCharts() throws {
        let db = try TestDatabase()
        _ = try HistoryScenario(db)
        let result = try Self.report(db, Self.week + ["--format", "html"])
        #expect(result.status == 0, "\(result.stderr)")
        let html = result.stdout
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"zh-CN\">"))
        #expect(!html.lowercased().contains("<script"))
        #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"))
        #expect(html.contains("554 5.7.1 &lt;b&gt;rejected&lt;/b&gt; &amp; &quot;spam&quot;"))
        let charts = try SVGDocument.charts(in: html)
        #expect(charts.count == 2)
        let mails = charts[0], missDays = charts[1]

        #expect(mails.bars.count == 7)
        var units: [Double] = []
        for (bar, (date, counts)) in zip(mails.bars, HistoryScenario.days) {
            let sent = counts[1], failed = counts[2] + counts[3] + counts[4] + counts[7]
            #expect(bar.attributes["data-day"] == date)
            #expect(bar.attributes["data-sent"] == String(sent))
            #expect(bar.attributes["data-failed"] == String(failed))
            #expect(bar.title.hasPrefix("\(date): \(sent) sent, \(failed) not delivered"))
            let sentHeight = try #require(bar.number("sent", "height"))
            let failedHeight = try #require(bar.number("failed", "height"))
            if sent == 0 { #expect(sentHeight == 0) } else { units.append(sentHeight / Double(sent)) }
            if failed == 0 { #expect(failedHeight == 0) } else { units.append(failedHeight / Double(failed)) }
            // Stacked: sent on the baseline, failed on top of it.
            let baseline = mails.plotNumber("y")! + mails.plotNumber("height")!
            #expect(abs(bar.number("sent", "y")! + sentHeight - baseline) < 0.02)
            #expect(abs(bar.number("failed", "y")! + failedHeight - bar.number("sent", "y")!) < 0.02)
        }
        #expect(units.count == 8)
        #expect(units.allSatisfy { abs($0 - units[0]) < 0.01 })

        #expect(missDays.bars.map { $0.attributes["data-m"] } == (0...6).map(String.init))
        units = []
        for bar in missDays.bars {
            let m = Int(bar.attributes["data-m"]!)!
            let (sent, notSent) = HistoryScenario.missDays[m] ?? (0, 0)
            #expect(bar.attributes["data-count"] == String(sent + notSent))
            let height = bar.segments.compactMap { Double($0["height"] ?? "") }.reduce(0, +)
            if sent + notSent == 0 { #expect(height == 0) } else { units.append(height / Double(sent + notSent)) }
        }
        #expect(units.allSatisfy { abs($0 - units[0]) < 0.01 })
    }

    @Test("HTML in headless Chromium: the screenshot shows both charts with bars of the right colours and heights",
          .enabled(if: Chromium.available, "chromium is not installed (apt-get install chromium)"))
    func screenshot() throws {
        let db = try TestDatabase()
        _ = try HistoryScenario(db)
        let result = try Self.report(db, Self.week + ["--format", "html"])
        #expect(result.status == 0)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sn-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("report.html").path
        try Data(result.stdout.utf8).write(to: URL(fileURLWithPath: page))
        let png = folder.appendingPathComponent("report.png").path
        try Chromium.screenshot(of: page, to: png, width: 1200, height: 1600)
        let shot = try Screenshot(png: png)
        #expect(shot.width == 1200)
        #expect(shot.height == 1600)

        // The plot areas are the only pixels of their colour: two of them, one above the other.
        let plots = shot.areas(of: SVGBarChart.plotColor)
        try #require(plots.count == 2, "plot areas: \(plots)")
        let charts = try SVGDocument.charts(in: result.stdout)
        let checks: [(SVGDocument, (x0: Int, y0: Int, x1: Int, y1: Int), [(String, String)], (SVGDocument.Bar) -> [Int])] = [
            (charts[0], plots[0], [("sent", HistoryCharts.sentColor), ("failed", HistoryCharts.failedColor)],
             { [Int($0.attributes["data-sent"]!)!, Int($0.attributes["data-failed"]!)!] }),
            (charts[1], plots[1], [("sent", HistoryCharts.notifiedColor), ("not-sent", HistoryCharts.notNotifiedColor)],
             { [Int($0.attributes["data-sent"]!)!, Int($0.attributes["data-not-sent"]!)!] }),
        ]
        for (svg, area, series, values) in checks {
            let scaleX = Double(area.x1 - area.x0 + 1) / svg.plotNumber("width")!
            var measured: [(pixels: Int, number: Int, bar: String)] = []
            for bar in svg.bars {
                let rect = try #require(bar.segment(series[0].0))
                let center = Double(rect["x"]!)! + Double(rect["width"]!)! / 2
                let x = area.x0 + Int(((center - svg.plotNumber("x")!) * scaleX).rounded())
                let numbers = values(bar)
                var above: Int?
                for ((_, color), number) in zip(series, numbers) {
                    // Down to two rows below the plot: the bars end on the axis line.
                    let run = shot.run(of: color, x: x, y0: area.y0, y1: area.y1 + 2)
                    if number == 0 {
                        #expect(run.count == 0, "\(bar.title): \(color) drawn for 0")
                    } else {
                        #expect(run.count > 0, "\(bar.title): no \(color) at x \(x)")
                        measured.append((run.count, number, bar.title))
                        // Stacked: each series sits on top of the one below.
                        if let above, let bottom = run.bottom { #expect(bottom < above, "\(bar.title)") }
                        above = run.top ?? above
                    }
                }
            }
            // One scale on the page, taken from the tallest segment: every segment is its number of
            // that many pixels, give or take 2 pixels of rounding.
            let tallest = try #require(measured.max { $0.number < $1.number })
            let unit = Double(tallest.pixels) / Double(tallest.number)
            #expect(unit > 10)
            for segment in measured {
                #expect(abs(Double(segment.pixels) - Double(segment.number) * unit) <= 2, "\(segment) at \(unit) px per unit")
            }
        }
        // The page's other colours: the warning rows of days without a run are visible too.
        #expect(shot.areas(of: "#fff4e5", minimum: 200).count >= 1)
    }

    @Test("HTML in headless Chromium: the DOM has the charts, the tables, and the hostile name as text",
          .enabled(if: Chromium.available, "chromium is not installed (apt-get install chromium)"))
    func dom() throws {
        let db = try TestDatabase()
        _ = try HistoryScenario(db)
        let result = try Self.report(db, Self.week + ["--format", "html"])
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("sn-history-\(UUID().uuidString).html").path
        try Data(result.stdout.utf8).write(to: URL(fileURLWithPath: page))
        defer { try? FileManager.default.removeItem(atPath: page) }
        let dom = try Chromium.dumpDOM(of: page)
        #expect(dom.contains("<html lang=\"zh-CN\">"))
        #expect(dom.components(separatedBy: "<g class=\"bar\"").count - 1 == 7 + 7)
        #expect(dom.components(separatedBy: "<tr data-day=").count - 1 == 7 + 5)
        #expect(!dom.contains("<script"))
        // Serialised as text: < > & escaped, so the browser made no element of it.
        #expect(dom.contains("&lt;script&gt;alert(\"x\")&lt;/script&gt;&amp;"))
        #expect(dom.contains("<section id=\"problems\">"))
        #expect(dom.contains("一键打卡"))
    }

    // MARK: Large days and errors

    @Test("table and HTML list 50 problem rows a day and count the rest; JSON lists them all")
    func limits() throws {
        let db = try TestDatabase()
        _ = try HistoryScenario(db)
        try db.addUsers(count: 60, domain: "bulk.example", lastCheckIn: "2026-01-06")
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status, attempts,
                                           last_error, next_attempt_at, recipient_masked)
            SELECT id, '2026-01-10', false, 3, 'retry', 3, '421 4.3.2 busy', '2026-01-10 09:20:00+08', 'u***@bulk.example'
            FROM users WHERE emergency_email LIKE '%@bulk.example'
            """)
        let json = try Self.json(try Self.report(db, Self.week + ["--format", "json"]))
        let problems = try #require(json["problems"] as? [[String: Any]])
        #expect(problems.filter { $0["date"] as? String == "2026-01-10" }.count == 62)
        let table = try Self.report(db, Self.week)
        #expect(table.stdout.components(separatedBy: "\n2026-01-10  retry ").count - 1 == 49)
        #expect(table.stdout.contains("… and 12 more on 2026-01-10 (--format json or csv lists them all)"))
        let html = try Self.report(db, Self.week + ["--format", "html"]).stdout
        #expect(html.components(separatedBy: "<tr data-day=\"2026-01-10\" data-status=").count - 1 == 50)
        #expect(html.contains("… and 12 more on 2026-01-10"))
    }

    @Test("exit codes: 64 with a message for invalid arguments, 69 for an unreachable database, 78 for an unmigrated one")
    func exitCodes() throws {
        let db = try TestDatabase()
        let scenario = try HistoryScenario(db)
        let invalid: [([String], String)] = [
            (["report", "--from", "2026-02-30"], "--from must be a real date"),
            (["report", "--to", "yesterday"], "--to must be a real date"),
            (["report", "--from", "2026-01-14", "--to", "2026-01-13"], "is after --to"),
            (["report", "--from", "1990-01-01", "--to", "2026-01-13"], "at most 3660 days"),
            (["report", "--user", "1; DROP TABLE users"], "--user must be a user id"),
            (["report", "--format", "pdf"], "pdf"),
            (["report", "--user", UUID().uuidString.lowercased()], "no such user"),
        ]
        for (arguments, message) in invalid {
            let result = try Self.report(db, arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let down = try Self.report(db, Self.week, ["DATABASE_URL": "postgresql://postgres@127.0.0.1:1/none"])
        #expect(down.status == 69)
        #expect(down.stdout.isEmpty)
        let bare = try TestDatabase(migrate: false)
        let unmigrated = try Self.report(bare, Self.week)
        #expect(unmigrated.status == 78)
        #expect(unmigrated.stderr.contains("sileme-notifier migrate"))
        // Defaults: --to today in NOTIFY_TIME_ZONE, --from six days before.
        let today = CalendarDate(Date(), in: TimeZone(identifier: "Asia/Shanghai")!)
        let week = try Self.json(try Self.report(db, ["report", "--format", "json"]))
        #expect(week["to"] as? String == today.description)
        #expect(week["from"] as? String == today.adding(days: -6).description)
        _ = scenario
    }
}
