import Config
import Foundation
import Mail
import Rule
import Testing
import Values

/// The escalation's mails (docs/escalation.md): the `escalation` notice and the two outcome
/// notices, in Chinese (built in, and the same text shipped in config/templates) and English,
/// composed for a contact and threaded under the streak's alert like the all-clear.
@Suite("Escalation templates")
struct EscalationTemplateTests {
    static func day(_ text: String) -> CalendarDate { CalendarDate(parsing: text)! }
    static let at = Date(timeIntervalSince1970: 1_768_383_000)  // 2026-01-14 09:30 UTC, 17:30 in Shanghai

    static func composer(ack: Bool) throws -> MailComposer {
        var environment = ["FROM_EMAIL": "noreply@sileme.app"]
        if ack {
            environment["ACK_BASE_URL"] = "https://ack.example.com"
            environment["ACK_SECRET"] = String(repeating: "k", count: 40)
        }
        let configuration = try ConfigurationLoader(environment: environment, filePath: nil).load()
        return try MailComposer(configuration.mail, templates: MailTemplates(directory: nil))
    }

    static func job(_ kind: DeliveryJob.Kind, outcome: (contact: String, at: Date)? = nil) throws -> DeliveryJob {
        DeliveryJob(kind: kind, userID: "00000000-0000-4000-8000-000000000001", name: try DisplayName(cleaning: "张三"),
                    email: try EmailAddress(validating: "wang@example.com"), notificationDate: day("2026-01-13"), missedDays: 2,
                    lastCheckIn: day("2026-01-10"), inReplyTo: "sileme.20260113.alert@sileme.app", outcome: outcome)
    }

    @Test("the three kinds are mailed, answer the alert, and each goes out as its own webhook event type")
    func kinds() {
        for kind in [DeliveryJob.Kind.escalation, .outcomeOK, .outcomeUnreachable] {
            #expect(DeliveryJob.Kind.mailed.contains(kind) && DeliveryJob.Kind.threaded.contains(kind), "\(kind)")
        }
        #expect(!DeliveryJob.Kind.mailed.contains(.unheard), "unheard is for the operator, on the webhook only")
        #expect(DeliveryJob.Kind.escalation.webhookEventType == .escalated && DeliveryJob.Kind.unheard.webhookEventType == .unheard)
        #expect(DeliveryJob.Kind.outcomeOK.webhookEventType == .outcome && DeliveryJob.Kind.outcomeUnreachable.webhookEventType == .outcome)
        #expect(WebhookEventType(rawValue: "checkin.escalated") == .escalated && WebhookEventType(rawValue: "notifier.unheard") == .unheard)
    }

    @Test("an escalation says nobody has answered, threads under the alert, and carries the contact's own link")
    func escalation() throws {
        let composer = try Self.composer(ack: true)
        let job = try Self.job(.escalation)
        let message = composer.message(for: job, runDate: Self.day("2026-01-13"), messageID: "e@sileme.app", date: Self.at)
        let text = String(decoding: message.rendered(), as: UTF8.self)
        #expect(text.contains("\r\nIn-Reply-To: <sileme.20260113.alert@sileme.app>\r\nReferences: <sileme.20260113.alert@sileme.app>\r\n"))
        let variables = composer.variables(for: job, runDate: Self.day("2026-01-13"))
        #expect(variables.alertDate == Self.day("2026-01-13"))
        let link = try #require(variables.ackURL)
        #expect(link == composer.ackLink(for: job, runDate: Self.day("2026-01-13")) && link.hasPrefix("https://ack.example.com/"))
        let rendered = MailTemplates.defaults[.escalation]!
        #expect(rendered.subject.contains("仍无人回应"))
        let mail = try MailTemplates(directory: nil).render(variables, kind: .escalation)
        #expect(mail.subject == "[一键打卡] 仍无人回应：请确认 张三 的状态")
        #expect(mail.text.contains("我们在 2026-01-13 告知您 张三 已连续 2 天") && mail.text.contains("\n\(link)\n"))
        // Without ACK_BASE_URL there is no link, and no words about one.
        let plain = try MailTemplates(directory: nil).render(try Self.composer(ack: false).variables(for: job, runDate: Self.day("2026-01-13")),
                                                             kind: .escalation)
        #expect(!plain.text.contains("我去看看") && !plain.text.contains("https://"))
    }

    @Test("the outcome notices name who went (masked) and when; \"I couldn't reach them\" asks the reader to act and links the page")
    func outcomes() throws {
        let composer = try Self.composer(ack: true)
        let templates = try MailTemplates(directory: nil)
        let runDate = Self.day("2026-01-14")
        let ok = composer.variables(for: try Self.job(.outcomeOK, outcome: ("daughter@example.com", Self.at)), runDate: runDate)
        #expect(ok.outcomeBy == EmailMasking.mask("daughter@example.com") && ok.outcomeAt == "2026-01-14 17:30" && ok.ackURL == nil)
        let okMail = templates.render(ok, kind: .outcomeOK)
        #expect(okMail.subject == "[一键打卡] 张三 一切安好")
        #expect(okMail.text.contains("（\(ok.outcomeBy!)）已于 2026-01-14 17:30 确认：TA 一切安好"))
        let unreachable = composer.variables(for: try Self.job(.outcomeUnreachable, outcome: ("daughter@example.com", Self.at)), runDate: runDate)
        let mail = templates.render(unreachable, kind: .outcomeUnreachable)
        #expect(mail.subject == "[一键打卡] 仍未联系上 张三")
        #expect(mail.text.contains("已于 2026-01-14 17:30 告知：没能联系上 TA") && mail.text.contains(unreachable.ackURL ?? "no link"))
    }

    @Test("English: every new kind filled, in words of its own")
    func english() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/templates/en").path
        let english = try MailTemplates(directory: folder)
        var variables = TemplateVariables(userName: "Zhang San", missDays: 2, lastCheckInDate: Self.day("2026-01-10"),
                                          runDate: Self.day("2026-01-14"), appName: "Check-in")
        variables.alertDate = Self.day("2026-01-13")
        variables.outcomeBy = "d***@example.com"
        variables.outcomeAt = "2026-01-14 17:30"
        variables.ackURL = "https://ack.example.com/a/TOKEN"
        #expect(english.render(variables, kind: .escalation).subject == "[Check-in] Nobody has answered yet: please check on Zhang San")
        #expect(english.render(variables, kind: .escalation).text.contains("I'm on it"))
        #expect(english.render(variables, kind: .outcomeOK).text.contains("(d***@example.com) said at 2026-01-14 17:30 that they are OK"))
        #expect(english.render(variables, kind: .outcomeUnreachable).text.contains("could not reach them")
                && english.render(variables, kind: .outcomeUnreachable).text.contains("\nhttps://ack.example.com/a/TOKEN\n"))
    }
}
