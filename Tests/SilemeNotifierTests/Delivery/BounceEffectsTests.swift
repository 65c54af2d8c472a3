import Config
import Foundation
import Output
@testable import Store
import Testing
import Values
@testable import Admin
@testable import Delivery
@testable import Rule
@testable import Webhook

/// A bounce's effects and reporting, their pure parts (docs/bounces.md): the
/// `contact.undeliverable` event's body, its kind (webhook only, one per contact), when the reader
/// writes its record, the metrics file's bounce figures, and `check`'s bounce mailbox line.
@Suite("Bounce effects and reporting")
struct BounceEffectsTests {
    static let day = CalendarDate(year: 2026, month: 1, day: 13)!
    static let time = Date(timeIntervalSince1970: 1_768_266_000)  // 2026-01-13T01:00:00Z

    static func settings(poll: Int = 60) throws -> BounceSettings {
        var settings = BounceSettings(address: try EmailAddress(validating: "bounces@notify.example.com"), secret: Secret("s-0123456789abcdef"),
                                      mailbox: .maildir(path: "/var/lib/sileme-notifier/bounces"))
        settings.pollSeconds = poll
        return settings
    }

    @Test("contact.undeliverable: the contact and the bounce (kind, date, Message-ID, status, diagnostic, time) after the other facts")
    func body() throws {
        var payload = WebhookEvent.Payload(userID: "3f0e6a5c-1111-4222-8333-944445555666", userName: "张三", runDate: Self.day,
                                           lastCheckInDate: Self.day.adding(days: -3), missDays: 2,
                                           contacts: [.init(email: "gone@example.com", position: 1), .init(email: "b@example.com", position: 2)])
        payload.contact = .init(email: "gone@example.com", position: 1)
        payload.bounce = WebhookEvent.Bounce(notificationKind: "alert", notificationDate: Self.day, messageID: "sileme.20260113.x@sileme.app",
                                             status: "5.1.1", diagnostic: "smtp; 550 5.1.1 <gone@example.com>: \"no\"\n",
                                             bouncedAt: Self.time.addingTimeInterval(600))
        let event = try WebhookEvent(type: .undeliverable, id: "msg_20260113_undeliverable_1", timestamp: Self.time, payload: payload)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(event.jsonBody.utf8)) as? [String: Any])
        #expect(json["type"] as? String == "contact.undeliverable")
        let data = try #require(json["data"] as? [String: Any])
        #expect((data["contact"] as? [String: Any])?["email"] as? String == "gone@example.com")
        #expect((data["contact"] as? [String: Any])?["position"] as? Int == 1)
        let bounce = try #require(data["bounce"] as? [String: Any])
        #expect(bounce["notification_kind"] as? String == "alert" && bounce["notification_date"] as? String == "2026-01-13")
        #expect(bounce["message_id"] as? String == "sileme.20260113.x@sileme.app" && bounce["status"] as? String == "5.1.1")
        #expect(bounce["diagnostic"] as? String == "smtp; 550 5.1.1 <gone@example.com>: \"no\"\n")
        #expect(bounce["bounced_at"] as? String == "2026-01-13T01:10:00Z")
        #expect(event.jsonBody.range(of: "\"contact\"")!.lowerBound < event.jsonBody.range(of: "\"bounce\"")!.lowerBound)

        payload.bounce?.status = nil
        payload.bounce?.diagnostic = nil
        payload.bounce?.messageID = nil
        let bare = try WebhookEvent(type: .undeliverable, id: "msg_x", timestamp: Self.time, payload: payload)
        let unknown = try #require((try JSONSerialization.jsonObject(with: Data(bare.jsonBody.utf8)) as? [String: Any])?["data"] as? [String: Any])
        #expect((unknown["bounce"] as? [String: Any])?["status"] is NSNull)
        #expect((unknown["bounce"] as? [String: Any])?["diagnostic"] is NSNull)
    }

    @Test("a body template sees is_undeliverable and the bounce as a section")
    func template() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("undeliverable-\(UUID().uuidString).mustache").path
        try Data(#"{"t":"{{type}}","u":{{is_undeliverable}},"s":"{{#bounce}}{{status}} {{notification_kind}}{{/bounce}}"}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let template = try WebhookBodyTemplate(try WebhookSettings.BodyTemplate(path: path), appName: "一键打卡")
        var payload = WebhookEvent.Payload(userID: "u", userName: "n", runDate: Self.day, lastCheckInDate: nil, missDays: 2, contacts: [])
        payload.bounce = WebhookEvent.Bounce(notificationKind: "all_clear", notificationDate: Self.day, messageID: nil, status: "5.2.1",
                                             diagnostic: nil, bouncedAt: Self.time)
        let body = try WebhookEvent(type: .undeliverable, id: "msg_x", timestamp: Self.time, payload: payload).body(using: template)
        #expect(body == #"{"t":"contact.undeliverable","u":true,"s":"5.2.1 all_clear"}"#)
    }

    @Test("undeliverable is webhook only, one per contact; selectable in WEBHOOK_EVENTS")
    func kind() throws {
        #expect(DeliveryJob.Kind.undeliverable.forAppOnly && DeliveryJob.Kind.reminder.forAppOnly)
        #expect(!DeliveryJob.Kind.mailed.contains(.undeliverable) && DeliveryJob.Kind.mailed.contains(.acknowledged))
        #expect(DeliveryJob.Kind.undeliverable.webhookEventType == .undeliverable)
        #expect(WebhookEventType.selectable.contains(.undeliverable))
        let messages = MessageSettings(rule: MissRule(thresholdDays: 2, catchUpDays: 7), webhookKinds: [.undeliverable])
        #expect(messages.channels(for: .undeliverable) == [.webhook])
        #expect(MessageSettings(rule: MissRule(thresholdDays: 2, catchUpDays: 7)).channels(for: .undeliverable).isEmpty)
        let job = DeliveryJob(kind: .undeliverable, channel: .webhook, userID: "u", name: try DisplayName(cleaning: "n"),
                              email: try EmailAddress(validating: "Gone@Example.com"), missedDays: 2, lastCheckIn: Self.day)
        #expect(job.contactKey == "gone@example.com", "one event per contact: the key names it")
        let alert = DeliveryJob(kind: .alert, channel: .webhook, userID: "u", name: try DisplayName(cleaning: "n"),
                                email: try EmailAddress(validating: "gone@example.com"), missedDays: 2, lastCheckIn: Self.day)
        #expect(alert.contactKey == "")
    }

    @Test("the reader's record: after a poll that read something, and after an empty one only every few minutes")
    func records() {
        var tally = BounceReader.Tally()
        #expect(BounceReader.records(tally, now: Self.time, lastRecorded: nil), "the first poll is recorded")
        #expect(!BounceReader.records(tally, now: Self.time, lastRecorded: Self.time.addingTimeInterval(-60)))
        #expect(BounceReader.records(tally, now: Self.time, lastRecorded: Self.time.addingTimeInterval(-BounceReader.recordInterval)))
        tally.read = 1
        #expect(BounceReader.records(tally, now: Self.time, lastRecorded: Self.time))
    }

    @Test("the metrics file: the reader's counters and last read time, only once it has a record")
    func metrics() {
        var figures = Housekeeping.Figures()
        #expect(!MetricsFile.render(figures, now: Self.time).contains("bounce"))
        figures.bounces = BounceStore.MailboxRecord(readAt: Self.time, failedAt: nil, reports: 7, bounced: 2, keptAside: 3, failures: 1)
        let text = MetricsFile.render(figures, now: Self.time)
        for line in ["sileme_notifier_bounce_reports_total 7", "sileme_notifier_bounces_applied_total 2",
                     "sileme_notifier_bounce_reports_kept_aside_total 3", "sileme_notifier_bounce_mailbox_failures_total 1",
                     "sileme_notifier_bounce_mailbox_read_timestamp_seconds 1768266000",
                     "# TYPE sileme_notifier_bounces_applied_total counter"] {
            #expect(text.contains(line + "\n"), "\(line)")
        }
    }

    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "IMAP: cannot connect to mail.example.com:993" }
    }

    @Test("check: reachable with its counts and last read; unreachable fails; not read lately warns")
    func check() throws {
        let settings = try Self.settings(poll: 60)
        let recent = BounceStore.MailboxRecord(readAt: Self.time.addingTimeInterval(-30))
        let ok = HealthCheck.bounceMailbox(settings, listing: .success((waiting: 2, keptAside: 3)), record: .success(recent), now: Self.time)
        #expect(ok.ok && !ok.warning)
        #expect(ok.detail.contains("reachable, 2 waiting, 3 kept aside unparsed") && ok.detail.contains("(30 s ago)"), "\(ok.detail)")

        let old = BounceStore.MailboxRecord(readAt: Self.time.addingTimeInterval(-BounceReader.recordInterval - 121))
        let stale = HealthCheck.bounceMailbox(settings, listing: .success((waiting: 0, keptAside: 0)), record: .success(old), now: Self.time)
        #expect(stale.ok && stale.warning && stale.detail.contains("is the daemon running?"))
        let never = HealthCheck.bounceMailbox(settings, listing: .success((waiting: 0, keptAside: 0)), record: .success(nil), now: Self.time)
        #expect(never.ok && never.warning && never.detail.contains("never read"))

        let down = HealthCheck.bounceMailbox(settings, listing: .failure(Unreachable()), record: .success(recent), now: Self.time)
        #expect(!down.ok && down.subject == "bounce mailbox")
        #expect(down.detail.contains("cannot be read: IMAP: cannot connect to mail.example.com:993"), "\(down.detail)")
    }

    @Test("retry --dry-run: a notice to a contact whose mail of the streak bounced says why it is not sent again")
    func retryView() {
        var target = RetryTarget(userID: "3f0e6a5c-1111-4222-8333-944445555666", status: "retry", attempts: 2, lastError: "451 later",
                                 recipient: "g***@example.com")
        target.kind = "all_clear"
        target.contactBounced = true
        let plan = RetryPlan(entries: [RetryPlan.Entry(target: target, decision: nil, reason: "contact_bounced")])
        #expect(plan.usersToSend.isEmpty)
        let table = RetryPlanFormat.table(plan, runDate: Self.day)
        #expect(table.contains("all_clear") && table.contains("contact_bounced"), "\(table)")
        #expect(RetryPlanFormat.json(plan, runDate: Self.day).contains("\"decision\":\"contact_bounced\""))
    }

    @Test("retry --dry-run: each mail's language, and why one is not the one asked for; none for a webhook event")
    func retryLanguages() {
        var mail = RetryTarget(userID: "3f0e6a5c-1111-4222-8333-944445555666", status: "failed", attempts: 1, lastError: "550 no",
                               recipient: "g***@example.com")
        mail.contactLanguage = "ru"
        var hook = RetryTarget(userID: "3f0e6a5c-1111-4222-8333-944445555666", status: "retry", attempts: 1, lastError: "500",
                               recipient: "webhook")
        hook.channel = .webhook
        var first = RetryPlan.Entry(target: mail, decision: .send)
        first.language = LanguageTag.Choice.choose(contact: "ru", user: "en-GB", fallback: .serviceDefault,
                                                   available: [.serviceDefault, LanguageTag("en")!])
        let plan = RetryPlan(entries: [first, RetryPlan.Entry(target: hook, decision: .send)])
        let table = RetryPlanFormat.table(plan, runDate: Self.day)
        #expect(table.contains("USER      KIND          STATUS   TRIES  LANG     NOW"), "\(table)")
        #expect(table.contains("alert         failed   1      en       send"), "\(table)")
        #expect(table.contains("alert/wh      retry    1      -        send"), "\(table)")
        #expect(table.hasSuffix("Written in another language than asked for:\n  3f0e6a5c  g***@example.com: no templates in ru → en\n"), "\(table)")
        #expect(table.split(separator: "\n").allSatisfy { DisplayWidth.of(String($0)) <= 100 })
        let json = RetryPlanFormat.json(plan, runDate: Self.day)
        #expect(json.contains("\"language\":\"en\",\"language_fallback\":\"no templates in ru\",\"decision\":\"send\""), "\(json)")
        #expect(json.contains("\"recipient\":\"webhook\",\"language\":null,\"decision\""), "\(json)")
    }
}
