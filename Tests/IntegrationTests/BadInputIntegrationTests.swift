import Foundation
import Testing
import TestSupport
@testable import Values
@testable import Rule
import Delivery

/// docs/rule.md's "bad data never stops a run and is never silently dropped", end to end (issue 6, bad
/// input): a database full of hostile names and emergency emails — header injections, controls,
/// RTL overrides, 10 KB names, emoji, encoded-word look-alikes, IDN domains, quoted and over-long
/// local parts, NULLs — plus check-ins dated in the future and good users. The run delivers to
/// exactly the users it can mail, records a `skipped` row with the reason for every other due
/// user, never crashes, and every delivered message parses (Python's `email`) with no injected
/// header. The dry run lists the same users with the same decisions.
///
/// `RuleIntegrationTests.badRows` is the small version of this test; this one covers every kind.
@Suite("Bad input on real servers", .enabled(if: TestEnvironment.enabled))
struct BadInputIntegrationTests {
    /// What should happen to one user on 2026-01-13.
    enum Outcome: Equatable {
        /// Mailed, to this address (normalised: domain lowercased, IDN in Punycode).
        case delivered(to: String)
        /// Skipped with this decision and recorded reason.
        case skipped(Decision, reason: String)
        /// Not listed at all (a check-in on or after the run date).
        case notListed
    }

    /// One user of the scenario.
    struct Row {
        let name: String?
        let email: String?
        var checkIns = ["2026-01-10"]
        let outcome: Outcome
    }

    static func rows(_ mail: Mailbox) -> [Row] {
        let d = mail.domain, t = mail.tag
        func email(_ error: AddressError) -> Outcome { .skipped(.invalidEmail, reason: "emergency email: \(error.reason)") }
        let noName = Outcome.skipped(.invalidName, reason: "name is empty after cleaning")
        let local64 = "l64-\(t)-" + String(repeating: "x", count: 64 - "l64-\(t)-".count)
        return [
            // Good users.
            Row(name: "张三", email: mail.address("good1"), outcome: .delivered(to: mail.address("good1"))),
            Row(name: "Good Two", email: mail.address("good2"), outcome: .delivered(to: mail.address("good2"))),
            // Hostile names with valid addresses: mailed, the name cleaned.
            Row(name: "Eve\r\nBcc: victim@example.com\r\nX-Evil: 1", email: mail.address("inject"), outcome: .delivered(to: mail.address("inject"))),
            Row(name: "\u{202E}evil\u{202C} \u{2067}محمد\u{2069}", email: mail.address("rtl"), outcome: .delivered(to: mail.address("rtl"))),
            Row(name: String(repeating: "长", count: 3500), email: mail.address("long"), outcome: .delivered(to: mail.address("long"))),
            Row(name: "李四 👨‍👩‍👧 😀🏳️‍🌈", email: mail.address("emoji"), outcome: .delivered(to: mail.address("emoji"))),
            Row(name: "=?utf-8?B?SGk=?= \"q\" <angle> a, b; c: \\", email: mail.address("specials"), outcome: .delivered(to: mail.address("specials"))),
            Row(name: "\u{1B}[2Jclear\u{7F}\u{85}\u{9F}\u{200B}", email: mail.address("controls"), outcome: .delivered(to: mail.address("controls"))),
            Row(name: "{{user_name}} {{#x}} \u{301}", email: mail.address("mustache"), outcome: .delivered(to: mail.address("mustache"))),
            // Hostile but valid addresses: mailed, normalised.
            Row(name: "Upper", email: "Upper.Case+Tag@\(d.uppercased())", outcome: .delivered(to: "Upper.Case+Tag@\(d)")),
            Row(name: "Padded", email: " \t padded@\(d) \r\n", outcome: .delivered(to: mail.address("padded"))),
            Row(name: "Atext", email: "o'neil!#$%&*/=?^`{|}~@\(d)", outcome: .delivered(to: "o'neil!#$%&*/=?^`{|}~@\(d)")),
            Row(name: "IDN", email: "idn-\(t)@Bücher.example", outcome: .delivered(to: "idn-\(t)@xn--bcher-kva.example")),
            Row(name: "CJK IDN", email: "cjk-\(t)@例子.中国", outcome: .delivered(to: "cjk-\(t)@xn--fsqu00a.xn--fiqs8s")),
            Row(name: "Full width", email: "fw-\(t)@ｅｘａｍｐｌｅ．ｃｏｍ", outcome: .delivered(to: "fw-\(t)@example.com")),
            Row(name: "Local 64", email: mail.address(local64), outcome: .delivered(to: mail.address(local64))),
            // Invalid addresses: skipped with the reason.
            Row(name: "No at", email: "no-at-sign", outcome: email(.missingAt)),
            Row(name: "Two at", email: "a@b@\(d)", outcome: email(.multipleAt)),
            Row(name: "Space", email: "two words@\(d)", outcome: email(.whitespace)),
            Row(name: "CRLF", email: "x@\(d)\r\nBcc: victim@example.com", outcome: email(.controlCharacter)),
            Row(name: "Quoted", email: "\"quoted local\"@\(d)", outcome: email(.quotedLocalPart)),
            Row(name: "300", email: String(repeating: "l", count: 300) + "@\(d)", outcome: email(.localPartTooLong)),
            Row(name: "Trailing dot local", email: "trailing.@\(d)", outcome: email(.misplacedDot)),
            Row(name: "Trailing dot domain", email: "a@\(d).", outcome: email(.invalidDomain)),
            Row(name: "Encoded word", email: "=?utf-8?q?a?=@\(d)", outcome: email(.encodedWordLookAlike)),
            Row(name: "Empty", email: "", outcome: email(.empty)),
            Row(name: "Blank", email: " \t ", outcome: email(.empty)),
            Row(name: "NULL email", email: nil, outcome: email(.empty)),
            Row(name: "Emoji local", email: "😀@\(d)", outcome: email(.nonASCIILocalPart)),
            Row(name: "Emoji domain", email: "a@😀.com", outcome: email(.invalidDomain)),
            Row(name: "Angle", email: "<a@\(d)>", outcome: email(.invalidLocalCharacter)),
            Row(name: "List", email: "a@\(d),b", outcome: email(.invalidDomain)),
            Row(name: "Literal", email: "a@[127.0.0.1]", outcome: email(.invalidDomain)),
            Row(name: " \t\r\n ", email: "bad-both", outcome: email(.missingAt)),  // the address is judged first
            // Invalid names (valid addresses): skipped with the reason.
            Row(name: " \t\r\n\u{3000} ", email: mail.address("blank-name"), outcome: noName),
            Row(name: "\u{200B}\u{FEFF}\u{202E}\u{200D}", email: mail.address("invisible-name"), outcome: noName),
            Row(name: "", email: mail.address("empty-name"), outcome: noName),
            Row(name: nil, email: mail.address("null-name"), outcome: noName),
            // Check-ins dated in the future: one on D or D + 1 cancels, whatever the data; one dated
            // later is a wrong device clock, ignored (docs/guards.md): it must not silence the user.
            Row(name: "Future", email: mail.address("future"), checkIns: ["2026-01-10", "2026-01-14"], outcome: .notListed),
            Row(name: "Only future", email: mail.address("only-future"), checkIns: ["2026-02-01"], outcome: .notListed),
            Row(name: "Far future", email: mail.address("far-future"), checkIns: ["2026-01-10", "9999-12-31"],
                outcome: .delivered(to: mail.address("far-future"))),
            Row(name: nil, email: "no-at-future", checkIns: ["2026-01-10", "2026-01-13"], outcome: .notListed),
        ]
    }

    @Test("hostile rows: mailed to exactly the valid users, every other due user skipped with a reason, no header injected")
    func hostileRows() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        // The shipped schema (and the design doc's) has NOT NULL VARCHAR columns; an existing app
        // database may be looser (migration 001 leaves it as it is), so this one holds NULLs and 10 KB.
        try db.query("""
            ALTER TABLE users ALTER COLUMN name DROP NOT NULL, ALTER COLUMN name TYPE TEXT,
                              ALTER COLUMN emergency_email DROP NOT NULL, ALTER COLUMN emergency_email TYPE TEXT
            """)
        let rows = Self.rows(mail)
        let ids = try rows.map { try db.addUser(name: $0.name, email: $0.email, checkIns: $0.checkIns) }
        let byID = Dictionary(uniqueKeysWithValues: zip(ids, rows))
        let env = try NotifierProcess.environment(database: db)
        let listed = byID.filter { $0.value.outcome != .notListed }
        let delivered = byID.compactMapValues { if case .delivered(let to) = $0.outcome { to } else { nil } }
        let skipped = byID.compactMapValues { if case .skipped(let decision, let reason) = $0.outcome { (decision, reason) } else { nil } }

        // The dry run lists every due user with the right decision, in every format, and writes nothing.
        try db.foldCheckIns()  // the daemon's every second: nothing left for the reader to fold
        let before = try db.dump()
        let json = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", "json"], environment: env)
        #expect(json.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let users = try #require(report["users"] as? [[String: Any]])
        let decisions = Dictionary(users.map { ($0["user_id"] as? String ?? "", $0["decision"] as? String ?? "") }) { a, _ in a }
        #expect(users.count == listed.count && Set(decisions.keys) == Set(listed.keys))
        for (id, row) in listed {
            let expected = switch row.outcome {
            case .delivered: "send"
            case .skipped(let decision, _): decision.rawValue
            case .notListed: "-"
            }
            #expect(decisions[id] == expected, "dry-run decision of \(DebugText.literal(row.name)) / \(DebugText.literal(row.email))")
        }
        let invalidEmails = skipped.values.filter { $0.0 == .invalidEmail }.count
        #expect(report["summary"] as? [String: Int] == ["send": delivered.count, "already_notified": 0, "stale": 0,
                                                        "invalid_email": invalidEmails, "invalid_name": skipped.count - invalidEmails,
                                                        "superseded": 0, "paused": 0, "held": 0])
        for format in ["table", "csv"] {
            let other = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13", "--format", format], environment: env)
            #expect(other.status == 0, "dry run as \(format)")
            if format == "csv" { #expect(CSVText.rows(other.stdout).count == listed.count + 1, "one CSV line per listed user") }
        }
        #expect(try db.dump() == before, "the dry runs wrote nothing")
        #expect(try mail.taggedDeliveries().isEmpty, "the dry runs sent nothing")

        // The real run: exit 0, the counts, one mail per deliverable user.
        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(2000))")
        #expect(run.stderr.contains("run finished for 2026-01-13: \(delivered.count) sent, 0 failed, \(skipped.count) skipped"))
        let deliveries = try mail.taggedDeliveries()
        #expect(deliveries.map(\.recipient).sorted() == delivered.values.map { $0.lowercased() }.sorted())

        // Every delivered message, parsed by Python's email: exactly the product's headers, the
        // right recipient, the cleaned name in the Subject and body, no defects.
        let parsed = try PythonMailParser.parse(deliveries.map { [UInt8]($0.raw) })
        let byRecipient = Dictionary(delivered.map { ($0.value.lowercased(), $0.key) }) { a, _ in a }
        for (delivery, message) in zip(deliveries, parsed) {
            let id = try #require(byRecipient[delivery.recipient])
            let row = try #require(byID[id])
            let name = try DisplayName(cleaning: row.name ?? "").value
            #expect(message.error == nil && message.defects.isEmpty && message.headerDefects.isEmpty, "\(delivery.recipient)")
            #expect(message.headerNames == ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Auto-Submitted",
                                            "X-Auto-Response-Suppress", "Content-Type", "Content-Transfer-Encoding"])
            #expect(message.to == [.init(name: "", address: delivered[id]!)])
            #expect(message.from == [.init(name: "一键打卡团队", address: "noreply@sileme.app")])
            #expect(message.headers["Subject"] == ["[一键打卡] 关于 \(name) 的签到提醒"])
            #expect(message.invisibleInSubject.isEmpty)
            #expect(message.headers["Message-ID"] == [delivery.messageID ?? "?"])
            #expect(message.parts.first?.content?.contains("\(name) 已连续 2 天未在") == true)
        }

        // The record: sent rows for the mailed, one skipped row with the reason for every other due user.
        for (id, row) in byID {
            let logs = try db.logs(id)
            switch row.outcome {
            case .delivered:
                #expect(logs.map(\.status) == ["sent"] && logs.first?.emailSent == true)
            case .skipped(_, let reason):
                #expect(logs.map(\.status) == ["skipped"] && logs.first?.lastError == reason,
                        "\(DebugText.literal(row.name)) / \(DebugText.literal(row.email)): \(logs)")
            case .notListed:
                #expect(logs.isEmpty, "nothing recorded for \(DebugText.literal(row.email)), who checked in on or after D")
            }
        }
        for address in delivered.values { #expect(!run.stderr.contains(address), "contact emails are never logged in full") }
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: run, minimum: 2 + delivered.count + skipped.count)
            let skipEvents = entries.filter { $0["NOTIFIER_EVENT"] == "notification_skipped" }.compactMap { $0["USER_ID"] }
            #expect(skipEvents.sorted() == skipped.keys.sorted(), "one notification_skipped event per skipped user")
        }

        // Again the same day: nothing new is sent, the skips stay recorded once.
        let again = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(again.status == 0)
        #expect(try mail.taggedDeliveries().count == delivered.count)
        for id in skipped.keys { #expect(try db.logs(id).count == 1) }
    }

    /// More skipped users than a run's first pass holds at once (`RunPlan.skipBatch`): it hands
    /// them over in batches as it finds them, recorded and announced at once — each user's row
    /// written once and their `notification_skipped` said once, none lost between the batches,
    /// and every one of them before the first mail.
    @Test("more skipped users than a batch: each recorded once and announced once, all before the first mail")
    func skipsInBatches() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let count = 2 * RunPlan.skipBatch + 37
        try db.query("""
            WITH u AS (INSERT INTO users (name, emergency_email)
                       SELECT 'Skipped ' || g, 'no-at-sign-' || g FROM generate_series(1, $1::int) g RETURNING id)
            INSERT INTO check_ins (user_id, check_in_date) SELECT id, '2026-01-10'::date FROM u
            """, [String(count)])
        for index in 1...3 { try db.addUser(name: "Good \(index)", email: mail.address("good\(index)"), checkIns: ["2026-01-10"]) }
        let skipped = try db.query("SELECT id::text FROM users WHERE name LIKE 'Skipped %'").compactMap { $0[0] }
        #expect(skipped.count == count)

        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: try NotifierProcess.environment(database: db))
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(2000))")
        #expect(run.stderr.contains("run finished for 2026-01-13: 3 sent, 0 failed, \(count) skipped"))
        #expect(try mail.taggedDeliveries().count == 3)

        // Recorded: one skipped row per user, with the reason.
        let rows = try db.query("""
            SELECT user_id::text, count(*)::text, min(last_error) FROM notification_logs WHERE status = 'skipped' GROUP BY user_id
            """)
        #expect(rows.compactMap { $0[0] }.sorted() == skipped.sorted())
        let reason = "emergency email: \(AddressError.missingAt.reason)"
        #expect(rows.allSatisfy { $0[1] == "1" && $0[2] == reason }, "\(rows.prefix(3))")
        #expect(try db.query("SELECT invalid_email FROM sileme.notifier_runs") == [[String(count)]])

        // Recorded before the first mail was claimed.
        #expect(try db.query("""
            SELECT max(updated_at) FILTER (WHERE status = 'skipped') < min(claimed_at) FILTER (WHERE email_sent)
            FROM notification_logs
            """) == [["t"]])

        // Announced: one warning per skipped user.
        let marker = "notification skipped for user "
        let announced = run.stderr.split(separator: "\n").compactMap { line in
            line.range(of: marker).map { String(line[$0.upperBound...].prefix(36)) }
        }
        #expect(announced.sorted() == skipped.sorted(), "each skipped user announced once")
        if TestEnvironment.current?.journal == true {
            // In the journal, every one before the first mail's `notification_sent`.
            let entries = try JournalReader.entries(of: run, minimum: 2 + 3 + count)
            let events = entries.filter { $0["NOTIFIER_EVENT"] == "notification_skipped" }.compactMap { $0["USER_ID"] }
            #expect(events.sorted() == skipped.sorted(), "one notification_skipped event per skipped user")
            let lastSkip = try #require(entries.lastIndex { $0["NOTIFIER_EVENT"] == "notification_skipped" })
            let firstMail = try #require(entries.firstIndex { $0["NOTIFIER_EVENT"] == "notification_sent" })
            #expect(lastSkip < firstMail, "every skip is announced before the first mail")
        }
    }
}
