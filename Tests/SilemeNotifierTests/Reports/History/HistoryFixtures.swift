import Foundation
@testable import Values
@testable import Output
@testable import Reports

/// A small made-up history (three days, a hostile name, a reply with an address and markup) fed
/// to the writers, and a way to read back what a writer wrote.
enum HistoryFixtures {
    static func date(_ text: String) -> CalendarDate { CalendarDate(parsing: text)! }
    static let shanghai = TimeZone(identifier: "Asia/Shanghai")!
    static let hostileName = "<script>alert(\"x\")</script>&"

    /// An instant given as local time in Shanghai (`2026-01-13 09:00:01`).
    static func instant(_ text: String) -> Date {
        let parts = text.split(separator: " ")
        let (y, m, d) = date(String(parts[0])).components
        let time = parts[1].split(separator: ":").map { Int($0)! }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = shanghai
        return calendar.date(from: DateComponents(year: y, month: m, day: d, hour: time[0], minute: time[1], second: time[2]))!
    }

    static func header(user: UserProfile? = nil, fullEmails: Bool = false) -> HistoryHeader {
        HistoryHeader(request: try! HistoryRequest(from: date("2026-01-11"), to: date("2026-01-13"), userID: user?.userID,
                                                   fullEmails: fullEmails, problemLimitPerDay: 2),
                      timeZone: shanghai, thresholdDays: 2, catchUpDays: 7, user: user, generatedAt: instant("2026-01-14 08:00:00"))
    }

    static var overview: HistoryOverview {
        var d1 = DayCounts(date: date("2026-01-11"))
        d1.runs = 1; d1.completedRuns = 1; d1.sent = 12; d1.failed = 1; d1.retryPending = 2
        let d2 = DayCounts(date: date("2026-01-12"))  // no run, no rows
        var d3 = DayCounts(date: date("2026-01-13"))
        d3.runs = 2; d3.failedRuns = 1; d3.completedRuns = 1; d3.sent = 5; d3.legacySent = 1; d3.legacyNotSent = 1
        d3.sending = 1; d3.skipped = 2; d3.failed = 3
        return HistoryOverview(
            days: [d1, d2, d3],
            skips: [SkipCount(date: date("2026-01-13"), reason: "emergency email: missing @", count: 2)],
            missDays: [MissDaysCount(missedDays: 2, sent: 15, notSent: 6), MissDaysCount(missedDays: 4, sent: 2, notSent: 0),
                       MissDaysCount(missedDays: 9, sent: 0, notSent: 4)])
    }

    static let runs = [
        RunRecord(id: 1, runDate: date("2026-01-11"), mode: "daemon", host: "notifier-1",
                  startedAt: instant("2026-01-11 09:00:00"), finishedAt: instant("2026-01-11 09:00:03"), status: "completed",
                  due: 15, sent: 12, failed: 3, alreadyNotified: 1, stale: 0, invalidEmail: 0, invalidName: 0,
                  busyElsewhere: 0, error: nil),
        RunRecord(id: 2, runDate: date("2026-01-13"), mode: "run-now", host: "管理机", startedAt: instant("2026-01-13 09:00:00"),
                  finishedAt: nil, status: "failed", due: nil, sent: nil, failed: nil, alreadyNotified: nil, stale: nil,
                  invalidEmail: nil, invalidName: nil, busyElsewhere: nil, error: "database unreachable: connection lost"),
    ]

    static func problem(_ day: String, _ status: String?, user: String, name: String, detail: String?,
                        next: Date? = nil, alive: Bool = false) -> NotificationRecord {
        NotificationRecord(date: date(day), status: status, emailSent: status == "sent", userID: user, name: name,
                           recipient: "z***@example.com", contactEmail: "z***@example.com", missedDays: 2,
                           lastCheckIn: date("2026-01-08"), attempts: 3, messageID: "20260111.abc@notifier-1",
                           sentAt: status == "sent" ? instant("2026-01-11 09:00:02") : nil, nextAttemptAt: next,
                           claimedAt: instant("2026-01-11 09:00:01"), claimedBy: "notifier-1:100", claimAlive: alive,
                           detail: detail)
    }

    static let problems = [
        problem("2026-01-11", "failed", user: "0f8a3c2e-1111-4000-8000-000000000001", name: "张三",
                detail: "550 5.1.1 <z***@example.com>: Recipient address rejected: User unknown in virtual mailbox table"),
        problem("2026-01-11", "retry", user: "0f8a3c2e-2222-4000-8000-000000000002", name: "名字很长很长很长的用户",
                detail: "451 4.7.1 try later", next: instant("2026-01-11 09:35:00")),
        problem("2026-01-13", "failed", user: "0f8a3c2e-3333-4000-8000-000000000003", name: hostileName,
                detail: "554 <b>spam</b> & \"x\""),
        problem("2026-01-13", "sending", user: "0f8a3c2e-4444-4000-8000-000000000004", name: "Bob", detail: nil),
    ]

    static let user = UserProfile(userID: "0f8a3c2e-1111-4000-8000-000000000001", name: "张三", contactEmail: "z***@example.com")

    static let streaks = [
        Streak(lastCheckIn: date("2026-01-03"), nextCheckIn: date("2026-01-08"), missedDays: 4, notifiedOn: date("2026-01-06"),
               sentAt: instant("2026-01-06 09:00:02"), notifiedMissedDays: 2, messageID: "m1@h", rows: 1, lastStatus: nil,
               lastError: nil, outcome: .notified),
        Streak(lastCheckIn: date("2026-01-08"), nextCheckIn: nil, missedDays: 5, notifiedOn: nil, sentAt: nil,
               notifiedMissedDays: nil, messageID: nil, rows: 2, lastStatus: "failed", lastError: "550 no such user",
               outcome: .notSent),
    ]

    /// Feeds the per-day report to `sink`.
    static func feedDays(_ sink: any HistorySink, header: HistoryHeader = header()) throws {
        try sink.begin(header, overview: overview)
        try sink.beginSection(.runs)
        for run in runs { try sink.run(run) }
        try sink.endSection(.runs)
        try sink.beginSection(.problems)
        for problem in problems { try sink.notification(problem) }
        try sink.endSection(.problems)
        try sink.end()
    }

    /// Feeds the per-user report to `sink`.
    static func feedUser(_ sink: any HistorySink) throws {
        try sink.begin(header(user: user), overview: overview)
        try sink.beginSection(.streaks)
        for streak in streaks { try sink.streak(streak) }
        try sink.endSection(.streaks)
        try sink.beginSection(.notifications)
        try sink.notification(problem("2026-01-06", "sent", user: user.userID, name: user.name, detail: "250 OK"))
        try sink.notification(problems[0])
        try sink.endSection(.notifications)
        try sink.end()
    }

    /// What `feed` wrote through a writer made by `make`, read back from a temporary file.
    static func render(_ format: HistoryFormat, _ feed: (any HistorySink) throws -> Void) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("history-\(UUID().uuidString)").path
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        defer { unlink(path) }
        do {
            let output = TextOutput(descriptor: descriptor)
            try feed(format.writer(output: output))
            output.flush()
        }
        close(descriptor)
        return String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }
}
