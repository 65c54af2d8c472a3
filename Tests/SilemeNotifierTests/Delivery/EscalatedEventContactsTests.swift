import Foundation
import Testing
@testable import Delivery
import Rule
import Values
import Webhook

/// What `checkin.escalated` and `notifier.unheard` say of each contact (docs/webhooks.md): the
/// contacts in force, each joined with where it stands in the streak as the store read it.
@Suite("Escalated event: the contacts' state")
struct EscalatedEventContactsTests {
    static func job(contacts: [(String, Int, Int)], streak: [EscalationRule.Contact]) throws -> DeliveryJob {
        let valid = try contacts.map { Evaluation.Contact(address: try EmailAddress(validating: $0.0), position: $0.1, tier: $0.2) }
        var job = DeliveryJob(kind: .escalation, channel: .webhook, userID: "u1", name: try DisplayName(cleaning: "张三"),
                              email: valid[0].address, contacts: valid, notificationDate: CalendarDate(parsing: "2026-01-13"),
                              missedDays: 3, lastCheckIn: CalendarDate(parsing: "2026-01-10")!)
        job.streakContacts = streak
        return job
    }

    @Test("three of the first tier (one bounced) and one of the second alerted by the escalation: the second is not of the first alert")
    func mixed() throws {
        let job = try Self.job(contacts: [("A@example.com", 1, 1), ("b@example.com", 2, 1), ("c@example.com", 3, 1), ("n@example.com", 4, 2)],
                               streak: [.init(key: "a@example.com", tier: 1, alerted: true, bounced: false),
                                        .init(key: "b@example.com", tier: 1, alerted: true, bounced: true),
                                        .init(key: "c@example.com", tier: 1, alerted: true, bounced: false),
                                        .init(key: "n@example.com", tier: 2, alerted: true, bounced: false)])
        let listed = WebhookChannel.streakContacts(job)
        #expect(listed.map(\.email) == ["A@example.com", "b@example.com", "c@example.com", "n@example.com"])
        #expect(listed.map(\.position) == [1, 2, 3, 4])
        #expect(listed.map(\.streak) == [.init(tier: 1, alerted: true, bounced: false), .init(tier: 1, alerted: true, bounced: true),
                                         .init(tier: 1, alerted: true, bounced: false), .init(tier: 2, alerted: false, bounced: false)])
    }

    @Test("only second-tier contacts, alerted at once: they are the first alert's; a contact added since is listed unalerted")
    func secondTierAlone() throws {
        let job = try Self.job(contacts: [("n@example.com", 1, 2), ("late@example.com", 2, 2)],
                               streak: [.init(key: "n@example.com", tier: 2, alerted: true, bounced: true)])
        #expect(WebhookChannel.streakContacts(job).map(\.streak) == [.init(tier: 2, alerted: true, bounced: true),
                                                                      .init(tier: 2, alerted: false, bounced: false)])
    }
}
