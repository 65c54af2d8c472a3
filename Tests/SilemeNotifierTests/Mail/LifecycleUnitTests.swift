import Config
import Foundation
import Mail
import Rule
import Testing
import Values

/// The lifecycle's pure parts: contacts in the rule, templates per kind, threading headers, and
/// which refusals mark a contact undeliverable.
@Suite("Lifecycle, unit")
struct LifecycleUnitTests {
    static let templates = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/templates").path
    let rule = MissRule(thresholdDays: 2, catchUpDays: 7)
    let day = { (text: String) in CalendarDate(parsing: text)! }

    func candidate(_ contacts: [String?], fallback: String? = "fallback@example.com") -> Candidate {
        Candidate(userID: "u1", rawName: "张三", rawEmail: fallback, lastCheckIn: day("2026-01-10"), notifiedInStreak: false,
                  contacts: contacts.enumerated().map { Candidate.RawContact(email: $1, position: $0 + 1) })
    }

    @Test("contacts: one alert per valid contact in serving order, invalid ones listed, the fallback only without contact rows")
    func contacts() throws {
        let evaluation = try #require(rule.evaluate(candidate(["a@example.com", "not an address", "B@Example.com", "a@EXAMPLE.com"]),
                                                    runDate: day("2026-01-13")))
        #expect(evaluation.decision == .send)
        let jobs = rule.jobs(for: candidate([]), evaluation)
        #expect(jobs.map(\.email.address) == ["a@example.com", "B@example.com"], "duplicates (case-insensitive) once")
        #expect(jobs.map(\.position) == [1, 3])
        #expect(jobs.allSatisfy { $0.kind == .alert && $0.notificationDate == nil })
        #expect(evaluation.invalidContacts.map(\.position) == [2])
        let fallback = try #require(rule.evaluate(candidate([]), runDate: day("2026-01-13")))
        #expect(rule.jobs(for: candidate([]), fallback).map(\.email.address) == ["fallback@example.com"])
        let none = try #require(rule.evaluate(candidate(["nope", nil]), runDate: day("2026-01-13")))
        #expect(none.decision == .invalidEmail)
        #expect(none.reason?.contains("#1") == true && none.reason?.contains("#2") == true)
    }

    @Test("every kind renders from the built-in text and from the shipped files alike; the English examples fill every variable")
    func templatesPerKind() throws {
        var variables = TemplateVariables(userName: "张三", missDays: 3, lastCheckInDate: day("2026-01-10"), runDate: day("2026-01-14"),
                                          appName: "一键打卡")
        variables.alertDate = day("2026-01-13")
        variables.checkedInAt = "2026-01-14 08:12"
        variables.checkInDate = day("2026-01-14")
        variables.contactEmail = "wang@example.com"
        variables.thresholdDays = 2
        variables.acknowledgedBy = "d***@example.com"
        variables.acknowledgedAt = "2026-01-14 09:30"
        let builtIn = try MailTemplates(directory: nil)
        let shipped = try MailTemplates(directory: Self.templates)
        let english = try MailTemplates(directory: Self.templates + "/en")
        var subjects = Set<String>()
        for kind in DeliveryJob.Kind.mailed {
            let a = builtIn.render(variables, kind: kind), b = shipped.render(variables, kind: kind)
            #expect(a.subject == b.subject && a.text == b.text, "\(kind)")
            let en = english.render(variables, kind: kind)
            #expect(!en.text.contains("{{") && en.text.contains("张三"), "\(kind)")
            subjects.insert(a.subject)
        }
        #expect(subjects.count == DeliveryJob.Kind.mailed.count, "each kind says something else")
        #expect(builtIn.render(variables, kind: .acknowledged).text.contains("d***@example.com）已于 2026-01-14 09:30"))
        // The acknowledgement link (docs/acknowledgement.md): only with ACK_BASE_URL, and then in the alert and the follow-up.
        #expect(!builtIn.render(variables, kind: .alert).text.contains("我去看看"), "no link, no words about one")
        var linked = variables
        linked.ackURL = "https://ack.example.com/a/TOKEN"
        for kind in [DeliveryJob.Kind.alert, .followUp] {
            let a = builtIn.render(linked, kind: kind), b = shipped.render(linked, kind: kind)
            #expect(a.text == b.text && a.text.contains("\nhttps://ack.example.com/a/TOKEN\n"), "\(kind)")
            #expect(english.render(linked, kind: kind).text.contains("I'm on it"), "\(kind)")
        }
        #expect(builtIn.render(variables, kind: .allClear).text.contains("已于 2026-01-14 08:12"))
        #expect(builtIn.render(variables, kind: .introduction).text.contains("wang@example.com"))
        #expect(english.render(variables, kind: .followUp).text.contains("not checked in for 3 days"))
    }

    @Test("a folder made before the lifecycle (alert files only) uses the built-in text for the other kinds")
    func oldFolder() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tpl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "Alert {{user_name}}\n".write(to: dir.appendingPathComponent("subject.mustache"), atomically: true, encoding: .utf8)
        try "Body\n".write(to: dir.appendingPathComponent("body.txt.mustache"), atomically: true, encoding: .utf8)
        // Half a kind is a mistake worth stopping for.
        let templates = try MailTemplates(directory: dir.path)
        let variables = TemplateVariables(userName: "X", missDays: 2, lastCheckInDate: day("2026-01-10"), runDate: day("2026-01-13"), appName: "A")
        #expect(templates.render(variables).subject == "Alert X")
        #expect(templates.render(variables, kind: .allClear).subject == "[A] X 已签到，一切正常")
        try "only a subject\n".write(to: dir.appendingPathComponent("follow_up.subject.mustache"), atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.self) { try MailTemplates(directory: dir.path) }
    }

    @Test("a reply is threaded: In-Reply-To and References name the alert, reduced to msg-id characters")
    func threading() throws {
        let from = try EmailAddress(validating: "noreply@sileme.app"), to = try EmailAddress(validating: "a@example.com")
        let message = MailMessage(from: from, to: to, subject: "s", textBody: "t", date: Date(timeIntervalSince1970: 0),
                                  timeZone: TimeZone(identifier: "UTC")!, messageID: "new@sileme.app",
                                  inReplyTo: "alert.1@sileme.app>\r\nBcc: x@y")
        let text = String(decoding: message.rendered(), as: UTF8.self)
        #expect(text.contains("\r\nIn-Reply-To: <alert.1@sileme.appBccx@y>\r\nReferences: <alert.1@sileme.appBccx@y>\r\n"))
        #expect(!text.contains("\r\nBcc:"))
        let plain = MailMessage(from: from, to: to, subject: "s", textBody: "t", date: Date(), timeZone: .current, messageID: "m@x")
        #expect(!String(decoding: plain.rendered(), as: UTF8.self).contains("In-Reply-To"))
    }

    @Test("undeliverable: 5.1.x, or 550/551/553 naming the recipient unknown (BounceClass); not policy, not a full mailbox, not transient")
    func noSuchUser() {
        let yes = ["550 5.1.1 <a@b>: Recipient address rejected: User unknown", "550-5.1.1 The email account does not exist",
                   "550 No such user here", "551 User not local", "554 5.1.2 Host unknown"]
        let no = ["550 5.7.1 Message rejected as spam", "552 5.2.2 Mailbox full", "554 Transaction failed", "500 syntax",
                  "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)", "550 Message rejected as spam",
                  "554 5.4.4 Host or domain name not found", "550 5.0.0 Access denied"]
        for reply in yes { #expect(SendOutcome.permanent(reply: reply).saysNoSuchUser, "\(reply)") }
        for reply in no { #expect(!SendOutcome.permanent(reply: reply).saysNoSuchUser, "\(reply)") }
        #expect(!SendOutcome.transient(reason: "450 5.1.1 try later", serverUnavailable: false).saysNoSuchUser)
    }
}
