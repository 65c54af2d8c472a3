import Foundation
import Testing
@testable import Values
@testable import Output
@testable import Rule
@testable import Store
@testable import Reports

/// The dry run's rows for the guards' decisions (docs/guards.md).
@Suite("Report rows with the guards")
struct GuardReportRowTests {
    let rule = MissRule(thresholdDays: 2, catchUpDays: 7)
    let runDate = CalendarDate(parsing: "2026-01-13")!

    func row(paused: String? = nil, future: String? = nil, others: [OtherAccount] = [], runDate: CalendarDate? = nil) throws -> ReportRow {
        let candidate = Candidate(userID: "u1", rawName: "张三", rawEmail: "zhang@example.com",
                                  lastCheckIn: CalendarDate(parsing: "2026-01-10")!, notifiedInStreak: false,
                                  pausedUntil: paused.flatMap { CalendarDate(parsing: $0) },
                                  ignoredFutureCheckIn: future.flatMap { CalendarDate(parsing: $0) }, sameContact: others)
        let evaluation = try #require(rule.evaluate(candidate, runDate: runDate ?? self.runDate))
        return ReportRow(candidate: candidate, evaluation: evaluation)
    }

    @Test("a send row names the ignored future-dated check-in and the end of a pause it counts from")
    func notes() throws {
        let future = try row(future: "2099-01-01")
        #expect(future.decision == .send)
        #expect(future.explanation == "ignored future-dated check-in 2099-01-01")
        let afterPause = try row(paused: "2026-01-20", runDate: CalendarDate(parsing: "2026-01-23")!)
        #expect(afterPause.explanation == "counted from the end of a pause on 2026-01-20")
        #expect(try row().explanation == nil)
    }

    @Test("superseded and paused rows say why; the table prints it on an indented line within 80 columns")
    func table() throws {
        let newer = OtherAccount(userID: "0b6f2c55-9a4e-4c7e-8d3a-2f1e6b7c8d9e", rawName: "张三", lastCheckIn: CalendarDate(parsing: "2026-01-12"))
        let rows = [try row(others: [newer]), try row(paused: "2026-01-15"), try row(future: "2099-01-01")]
        #expect(rows.map(\.decision) == [.superseded, .paused, .send])
        #expect(rows[0].newerAccount == newer.userID)
        let pipe = Pipe()
        let writer = TableReportWriter(output: TextOutput(descriptor: pipe.fileHandleForWriting.fileDescriptor), fullEmails: false)
        var counts = RunTally()
        try writer.begin(ReportHeader(runDate: runDate, timeZone: "Asia/Shanghai", thresholdDays: 2, catchUpDays: 7, dryRun: true))
        for row in rows { counts.count(row.decision); try writer.row(row) }
        counts.futureIgnored = 1
        try writer.end(counts)
        try pipe.fileHandleForWriting.close()
        let lines = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.contains("  ↳ newer account \(newer.userID) checked in 2026-01-12"))
        #expect(lines.contains("  ↳ paused until 2026-01-15"))
        #expect(lines.contains("  ↳ ignored future-dated check-in 2099-01-01"))
        for line in lines.dropFirst().dropLast() { #expect(DisplayWidth.of(line) <= 80) }
        #expect(lines.last == "Summary: send 1, already_notified 0, stale 0, invalid_email 0, invalid_name 0, superseded 1, paused 1")
    }
}
