import Foundation
import Testing
@testable import Values
@testable import Output
@testable import Rule
@testable import Store
@testable import Reports

@Suite("Report writers")
struct ReportWriterTests {
    static let header = ReportHeader(runDate: CalendarDate(parsing: "2026-01-13")!, timeZone: "Asia/Shanghai",
                                     thresholdDays: 2, catchUpDays: 7, dryRun: true)
    static let rule = MissRule(thresholdDays: 2, catchUpDays: 7)

    static func rows() -> [ReportRow] {
        let runDate = header.runDate
        let candidates = [
            Candidate(userID: "u1", rawName: "张三", rawEmail: "zhang@example.com", lastCheckIn: CalendarDate(parsing: "2026-01-10")!, notifiedInStreak: false),
            Candidate(userID: "u2", rawName: "=HYPERLINK(\"x\")", rawEmail: "bad\"mail, x", lastCheckIn: CalendarDate(parsing: "2026-01-10")!, notifiedInStreak: false),
            Candidate(userID: "u3", rawName: "名字很长很长很长很长很长的用户", rawEmail: "long@example.com", lastCheckIn: CalendarDate(parsing: "2025-12-01")!, notifiedInStreak: false),
        ]
        return candidates.compactMap { c in rule.evaluate(c, runDate: runDate).map { ReportRow(candidate: c, evaluation: $0) } }
    }

    static func render(_ make: (TextOutput) -> any ReportSink) throws -> String {
        let pipe = Pipe()
        let output = TextOutput(descriptor: pipe.fileHandleForWriting.fileDescriptor)
        let sink = make(output)
        var counts = RunTally()
        try sink.begin(header)
        for row in rows() { counts.count(row.decision); try sink.row(row) }
        try sink.end(counts)
        try pipe.fileHandleForWriting.close()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test("JSON has the fields of docs/interfaces.md with masked emails and summary counts")
    func json() throws {
        let text = try Self.render { JSONReportWriter(output: $0, fullEmails: false) }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["run_date"] as? String == "2026-01-13")
        #expect(object["time_zone"] as? String == "Asia/Shanghai")
        #expect(object["threshold_days"] as? Int == 2)
        #expect(object["dry_run"] as? Bool == true)
        let users = try #require(object["users"] as? [[String: Any]])
        #expect(users.count == 3)
        #expect(users[0]["email"] as? String == "z***@example.com")
        #expect(users[0]["consecutive_miss_days"] as? Int == 2)
        #expect(users[0]["decision"] as? String == "send")
        #expect(users[1]["decision"] as? String == "invalid_email")
        #expect(users[2]["decision"] as? String == "stale")
        let summary = try #require(object["summary"] as? [String: Int])
        #expect(summary == ["send": 1, "already_notified": 0, "stale": 1, "invalid_email": 1, "invalid_name": 0,
                            "superseded": 0, "paused": 0, "held": 0])
    }

    @Test("the new alerts' webhook events are kept on disk and read back whole, in order, after a read too")
    func hookSpill() throws {
        let spill = try DueSpill()
        let names: [String?] = ["张三", nil, "tab\tand\nnewline", "", String(repeating: "长", count: 500)]
        func event(_ n: Int) -> LifecycleStore.Due {
            .webhookAlert(userID: "user-\(n)", rawName: names[n % names.count], missedDays: n % 9 + 2,
                          lastCheckIn: CalendarDate(dayNumber: 20_000 + n))
        }
        for n in 0..<2_000 { try spill.append(event(n)) }
        #expect(spill.count == 2_000)
        func read() throws -> [LifecycleStore.Due] { var all: [LifecycleStore.Due] = []; try spill.forEach { all.append($0) }; return all }
        for _ in 0..<2 {
            let back = try read()
            #expect(back.count == 2_000)
            #expect(back.map(\.userID) == (0..<2_000).map { "user-\($0)" })
            #expect(back.map(\.rawName) == (0..<2_000).map { names[$0 % names.count] })
            #expect(back.map(\.missedDays) == (0..<2_000).map { $0 % 9 + 2 })
            #expect(back.map(\.lastCheckIn) == (0..<2_000).map { CalendarDate(dayNumber: 20_000 + $0) })
            #expect(back.allSatisfy { $0.kind == .alert && $0.channel == .webhook && $0.contact.isEmpty })
        }
        try spill.append(event(2_000))
        #expect(try read().last?.userID == "user-2000")
    }

    @Test("the owed messages on disk come back with what the report shows: kind, channel, user, contact, date, the alert they answer")
    func owedSpill() throws {
        let spill = try DueSpill()
        let kinds = DeliveryJob.Kind.allCases
        func message(_ n: Int) -> LifecycleStore.Due {
            .listed(kind: kinds[n % kinds.count], channel: n % 3 == 0 ? .webhook : .email, userID: "user-\(n)",
                    rawName: n % 4 == 0 ? nil : "名\(n)", contact: n % 3 == 0 ? "" : "c\(n)@example.com",
                    notificationDate: n % 5 == 0 ? nil : CalendarDate(dayNumber: 20_500 - n), inReplyTo: n % 2 == 0 ? nil : "m\(n)@sileme",
                    missedDays: n % 7, lastCheckIn: CalendarDate(dayNumber: 20_000 + n))
        }
        for n in 0..<1_500 { try spill.append(message(n)) }
        var back: [LifecycleStore.Due] = []
        try spill.forEach { back.append($0) }
        #expect(back.count == 1_500)
        for (n, due) in back.enumerated() {
            let sent = message(n)
            #expect(due.kind == sent.kind && due.channel == sent.channel && due.userID == sent.userID && due.rawName == sent.rawName
                    && due.contact == sent.contact && due.notificationDate == sent.notificationDate && due.inReplyTo == sent.inReplyTo
                    && due.missedDays == sent.missedDays && due.lastCheckIn == sent.lastCheckIn, "message \(n)")
        }
        #expect(Set(back.map(\.kind)) == Set(kinds))
    }

    @Test("JSON messages: the owed ones, then the webhook events from disk, each counted per channel and kind")
    func jsonMessages() throws {
        let spill = try DueSpill()
        for n in 0..<3 { try spill.append(.webhookAlert(userID: "u\(n)", rawName: "名", missedDays: 2, lastCheckIn: CalendarDate(dayNumber: 20_000))) }
        var allClear = LifecycleStore.Due.webhookAlert(userID: "a1", rawName: nil, missedDays: 3, lastCheckIn: CalendarDate(dayNumber: 20_000))
        allClear.kind = .allClear
        allClear.channel = .email
        allClear.contact = "li@example.com"
        allClear.notificationDate = CalendarDate(parsing: "2026-01-12")
        let pipe = Pipe()
        let output = TextOutput(descriptor: pipe.fileHandleForWriting.fileDescriptor)
        let sink = JSONReportWriter(output: output, fullEmails: false)
        try sink.begin(Self.header)
        try sink.lifecycle(LifecycleMessages(owed: [allClear], hooks: spill))
        try sink.end(RunTally())
        try pipe.fileHandleForWriting.close()
        let object = try #require(try JSONSerialization.jsonObject(with: pipe.fileHandleForReading.readDataToEndOfFile()) as? [String: Any])
        let messages = try #require(object["messages"] as? [[String: Any]])
        #expect(messages.map { $0["user_id"] as? String } == ["a1", "u0", "u1", "u2"])
        #expect(messages[0]["email"] as? String == "l***@example.com" && messages[0]["kind"] as? String == "all_clear")
        #expect(messages[1]["channel"] as? String == "webhook" && messages[1]["email"] is NSNull)
        #expect((object["messages_summary"] as? [String: Int])?["all_clear"] == 1)
        #expect((object["webhook_summary"] as? [String: Int])?["alert"] == 3)
    }

    @Test("full emails only when asked")
    func fullEmails() throws {
        let text = try Self.render { JSONReportWriter(output: $0, fullEmails: true) }
        #expect(text.contains("zhang@example.com"))
        #expect(!(try Self.render { JSONReportWriter(output: $0, fullEmails: false) }).contains("zhang@"))
    }

    @Test("CSV quotes fields and defuses formulas")
    func csv() throws {
        let lines = try Self.render { CSVReportWriter(output: $0, fullEmails: false) }.components(separatedBy: "\r\n")
        #expect(lines[0] == "\u{FEFF}user_id,name,email,last_check_in_date,consecutive_miss_days,decision,reason")
        #expect(lines[1] == "u1,张三,z***@example.com,2026-01-10,2,send,")
        #expect(lines[2].hasPrefix("u2,\"'=HYPERLINK(\"\"x\"\")\",b***,"))
    }

    @Test("the table fits 80 columns with wide characters and ends with the summary")
    func table() throws {
        let lines = try Self.render { TableReportWriter(output: $0, fullEmails: false) }.split(separator: "\n").map(String.init)
        for line in lines.dropFirst().dropLast() { #expect(DisplayWidth.of(line) <= 80) }
        #expect(lines.last == "Summary: send 1, already_notified 0, stale 1, invalid_email 1, invalid_name 0")
        // The LAST column starts at the same display column on every row, wide names or not.
        let rows = lines.dropFirst(2).dropLast()
        let columns = rows.map { line -> Int? in
            guard let range = line.range(of: "20[0-9][0-9]-", options: .regularExpression) else { return nil }
            return DisplayWidth.of(String(line[..<range.lowerBound]))
        }
        #expect(columns.count == 3)
        #expect(Set(columns).count == 1)
        let separators = 2 + 2 + 2
        #expect(columns.first == .some(8 + 12 + 20 + separators))
        #expect(DisplayWidth.of("名字") == 4)
        #expect(DisplayWidth.truncate("名字很长很长很长", to: 7) == "名字很…")
    }

    @Test("masking keeps the first character and the domain", arguments: [
        ("alice@example.com", "a***@example.com"), ("a@x.co", "a***@x.co"), ("nomail", "n***"), ("", ""), ("x@y@z.com", "x***@z.com"),
    ])
    func masking(raw: String, masked: String) {
        #expect(EmailMasking.mask(raw) == masked)
    }
}
