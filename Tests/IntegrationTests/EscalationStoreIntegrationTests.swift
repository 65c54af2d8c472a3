import Config
import Foundation
import Rule
import Store
import Testing
import Values

/// `EscalationStore` on real PostgreSQL (docs/escalation.md): the streaks due a step with the
/// facts the rule decides on, and each move of a streak's stage made once, whoever asks twice.
@Suite("Escalation: the store", .enabled(if: TestEnvironment.enabled))
struct EscalationStoreIntegrationTests {
    static let day = CalendarDate(parsing: "2026-01-13")!
    static let sent = Date(timeIntervalSince1970: 1_768_266_000)  // 2026-01-13 01:00 UTC
    static func at(hours: Double) -> Date { sent.addingTimeInterval(hours * 3600) }

    /// A user whose contacts are `contacts` (address, tier), each alerted on `day` (the first
    /// tier only, accepted at `sent`), as a run leaves them.
    static func alerted(_ db: TestDatabase, _ contacts: [(String, Int)]) throws -> String {
        let user = try db.addUser(name: "独居者", email: "old@example.com", checkIns: ["2026-01-10"])
        for (index, (address, tier)) in contacts.enumerated() {
            try db.query("INSERT INTO emergency_contacts (user_id, email, position, tier) VALUES ($1, $2, $3, $4)",
                         [user, address, String(index + 1), String(tier)])
            guard tier == 1 else { continue }
            try db.query("""
                INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, status, sent_at,
                                               consecutive_miss_days, last_check_in_date, message_id)
                VALUES ($1, '2026-01-13', 'alert', 'email', $2, true, 'sent', '2026-01-13 01:00:00+00', 2, '2026-01-10', 'alert.' || $2)
                """, [user, address.lowercased()])
        }
        return user
    }

    static let family = [("a@example.com", 1), ("B@Example.com", 1), ("c@example.com", 1), ("n@example.com", 2)]

    @Test("nothing due before ESCALATE_AFTER; then the streak with its contacts, tiers and states; each move once")
    func dueAndMoves() throws {
        let db = try TestDatabase()
        let user = try Self.alerted(db, Self.family)
        let connection = db.connection
        #expect(try EscalationStore.due(connection, before: Self.at(hours: -0.01), limit: 100).isEmpty)
        let due = try EscalationStore.due(connection, before: Self.sent, limit: 100)
        try #require(due.count == 1)
        #expect(due[0].userID == user && due[0].alertDate == Self.day && due[0].stage == "alerted")
        #expect(due[0].lastCheckIn == CalendarDate(parsing: "2026-01-10"))
        typealias C = EscalationRule.Contact
        #expect(due[0].facts == EscalationRule.Facts(firstSentAt: Self.sent, contacts: [
            C(key: "a@example.com", tier: 1, alerted: true, bounced: false), C(key: "b@example.com", tier: 1, alerted: true, bounced: false),
            C(key: "c@example.com", tier: 1, alerted: true, bounced: false), C(key: "n@example.com", tier: 2, alerted: false, bounced: false),
        ]))
        let rule = EscalationRule(after: .seconds(3 * 3600))
        #expect(rule.step(due[0].facts, now: Self.at(hours: 3)) == .escalate(.init(
            cause: .waitedOut, notices: ["a@example.com", "b@example.com", "c@example.com"], firstAlerts: ["n@example.com"])))

        #expect(try EscalationStore.escalate(connection, userID: user, alertDate: Self.day, at: Self.at(hours: 3)))
        #expect(try !EscalationStore.escalate(connection, userID: user, alertDate: Self.day, at: Self.at(hours: 3.1)), "once")
        #expect(try EscalationStore.due(connection, before: Self.at(hours: 2.9), limit: 100).isEmpty, "its clock restarted")
        let escalated = try EscalationStore.due(connection, before: Self.at(hours: 3), limit: 100)
        #expect(escalated.first?.stage == "escalated" && escalated.first?.facts.escalatedAt == Self.at(hours: 3))
        // An acknowledgement came after the escalation: the daemon finds it heard and settles it.
        #expect(try EscalationStore.settle(connection, userID: user, alertDate: Self.day, closed: false, at: Self.at(hours: 4)))
        #expect(try db.query("SELECT stage, heard_at IS NOT NULL FROM sileme.escalations WHERE user_id = $1", [user]) == [["heard", "t"]])
        #expect(try !EscalationStore.declareUnheard(connection, userID: user, alertDate: Self.day, at: Self.at(hours: 6)),
                "heard meanwhile: never unheard")
        #expect(try EscalationStore.due(connection, before: Self.at(hours: 100), limit: 100).isEmpty, "settled streaks are never found again")
    }

    @Test("heard: an acknowledgement, a check-in after L; bounced: the alert's bounce, or a second-tier address marked undeliverable")
    func facts() throws {
        let db = try TestDatabase()
        let acknowledged = try Self.alerted(db, [("a@example.com", 1)])
        try db.query("INSERT INTO sileme.acknowledgements (user_id, alert_date, contact, last_check_in_date) VALUES ($1, '2026-01-13', 'a@example.com', '2026-01-10')",
                     [acknowledged])
        let checkedIn = try Self.alerted(db, [("b@example.com", 1)])
        try db.checkIn(checkedIn, "2026-01-13")
        let bounced = try Self.alerted(db, [("c@example.com", 1), ("d@example.com", 1), ("n@example.com", 2)])
        try db.query("UPDATE notification_logs SET status = 'bounced' WHERE user_id = $1 AND contact = 'c@example.com'", [bounced])
        try db.query("INSERT INTO contact_status (user_id, email, status) VALUES ($1, 'n@example.com', 'undeliverable')", [bounced])
        let fallback = try db.addUser(name: "Solo", email: " Solo@Example.com ", checkIns: ["2026-01-10"])
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, contact, email_sent, status, sent_at, consecutive_miss_days, last_check_in_date)
            VALUES ($1, '2026-01-13', 'solo@example.com', true, 'sent', '2026-01-13 01:00:00+00', 2, '2026-01-10')
            """, [fallback])

        let due = Dictionary(uniqueKeysWithValues: try EscalationStore.due(db.connection, before: Self.at(hours: 3), limit: 100).map { ($0.userID, $0.facts) })
        #expect(due.count == 4)
        #expect(due[acknowledged]?.acknowledged == true && due[acknowledged]?.checkedIn == false)
        #expect(due[checkedIn]?.checkedIn == true && due[checkedIn]?.acknowledged == false)
        #expect(due[bounced]?.contacts.map(\.bounced) == [true, false, true])
        #expect(due[bounced]?.contacts.map(\.alerted) == [true, true, false])
        #expect(due[fallback]?.contacts == [EscalationRule.Contact(key: "solo@example.com", tier: 1, alerted: true, bounced: false)])
        #expect(try EscalationStore.due(db.connection, before: Self.at(hours: 3), limit: 2).count == 2, "at most limit")
    }

    /// What escalated streaks owe from `oldest` on (`dueStreakNotices` for the escalation's kinds),
    /// with or without the webhook's events.
    static func escalations(_ store: LifecycleStore, _ db: PGConnection, oldest: String, webhook: Bool) throws -> [LifecycleStore.Due] {
        let messages = MessageSettings(rule: MissRule(thresholdDays: 2, catchUpDays: 7), webhookKinds: webhook ? [.escalation, .unheard] : [])
        return try store.dueStreakNotices(db, oldest: CalendarDate(parsing: oldest)!, kinds: [.escalation, .unheard], messages: messages,
                                          firstAlerts: true)
    }

    @Test("the rule's recipients, kept with the escalation, are the ones sent to: a list unlike the tiers' is followed, contact by contact")
    func ruleListIsSent() throws {
        let db = try TestDatabase()
        let user = try Self.alerted(db, Self.family)
        let connection = db.connection
        let due = try #require(try EscalationStore.due(connection, before: Self.sent, limit: 100).first)
        guard case .escalate(let escalation) = EscalationRule(after: .seconds(3 * 3600)).step(due.facts, now: Self.at(hours: 3)) else {
            Issue.record("the streak escalates")
            return
        }
        // The rule's own lists, kept and followed.
        #expect(try EscalationStore.escalate(connection, userID: user, alertDate: Self.day, at: Self.at(hours: 3),
                                             notices: escalation.notices, firstAlerts: escalation.firstAlerts))
        #expect(try db.query("SELECT notice_contacts::text, first_alert_contacts::text FROM sileme.escalations WHERE user_id = $1", [user])
                == [["{a@example.com,b@example.com,c@example.com}", "{n@example.com}"]])
        let store = LifecycleStore(claimLeaseSeconds: 120)
        func owed() throws -> [String] {
            try Self.escalations(store, connection, oldest: "2026-01-01", webhook: false).map { "\($0.kind.rawValue) \($0.contact.lowercased())" }
        }
        #expect(try owed() == ["alert n@example.com", "escalation a@example.com", "escalation b@example.com", "escalation c@example.com"])
        // Lists that differ from what the tiers would say now (an app that changed a tier since,
        // say): the kept lists are what is sent, not a second decision.
        try db.query("UPDATE sileme.escalations SET notice_contacts = '{b@example.com}', first_alert_contacts = '{}' WHERE user_id = $1", [user])
        #expect(try owed() == ["escalation b@example.com"])
        try db.query("UPDATE emergency_contacts SET tier = 1 WHERE user_id = $1", [user])
        try db.query("UPDATE sileme.escalations SET first_alert_contacts = '{n@example.com}' WHERE user_id = $1", [user])
        #expect(try owed() == ["alert n@example.com", "escalation b@example.com"], "n is on the list, whatever its tier is now")
    }

    @Test("an escalated streak owes a notice to each first-tier contact whose alert stands (not the reporter), threaded, the second tier's first alert (dated as the streak's), and its events; once each")
    func owedMessages() throws {
        let db = try TestDatabase()
        let user = try Self.alerted(db, Self.family + [("d@example.com", 1)])
        let waiting = try Self.alerted(db, [("w@example.com", 1)])
        let connection = db.connection
        let store = LifecycleStore(claimLeaseSeconds: 120)
        func owed() throws -> [String] {
            try Self.escalations(store, connection, oldest: "2026-01-01", webhook: true)
                .map { "\($0.userID == user ? "u" : "w") \($0.kind.rawValue) \($0.channel.rawValue) \($0.contact) \($0.inReplyTo ?? "-") \($0.missedDays)" }
        }
        #expect(try owed().isEmpty, "nothing before the escalation")
        try db.query("UPDATE notification_logs SET status = 'bounced' WHERE user_id = $1 AND contact = 'b@example.com'", [user])
        try db.query("""
            UPDATE sileme.escalations SET outcome = 'unreachable', outcome_contact = 'c@example.com', outcome_at = now() WHERE user_id = $1
            """, [user])
        #expect(try EscalationStore.escalate(connection, userID: user, alertDate: Self.day, at: Self.at(hours: 3)))
        #expect(try owed() == ["u alert email n@example.com - 2",
                               "u escalation email a@example.com alert.a@example.com 2", "u escalation email d@example.com alert.d@example.com 2",
                               "u escalation webhook  - 2"], "b bounced, c said it; n, the second tier, gets its first alert")
        // Sent: not owed again; refused for a while: owed again when its retry comes.
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, status, consecutive_miss_days)
            VALUES ($1, '2026-01-13', 'escalation', 'email', 'a@example.com', true, 'sent', 2),
                   ($1, '2026-01-13', 'escalation', 'webhook', '', true, 'sent', 2),
                   ($1, '2026-01-13', 'alert', 'email', 'n@example.com', true, 'sent', 2)
            """, [user])
        // Once alerted, the second tier is not of the first alert: never owed a notice.
        #expect(try owed() == ["u escalation email d@example.com alert.d@example.com 2"])
        #expect(try EscalationStore.declareUnheard(connection, userID: user, alertDate: Self.day, at: Self.at(hours: 6)))
        #expect(try owed() == ["u escalation email d@example.com alert.d@example.com 2", "u unheard webhook  - 2"])
        #expect(try Self.escalations(store, connection, oldest: "2026-01-14", webhook: true).isEmpty, "older streaks are out of the window")
        #expect(try Self.escalations(store, connection, oldest: "2026-01-01", webhook: false).map(\.contact) == ["d@example.com"],
                "without the webhook: the mails alone")
        // Another mail of the streak to d bounced (its acknowledged notice, say): d is not told either.
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, status, consecutive_miss_days)
            VALUES ($1, '2026-01-13', 'acknowledged', 'email', 'd@example.com', true, 'bounced', 2)
            """, [user])
        #expect(try owed() == ["u unheard webhook  - 2"])
        _ = waiting
    }
}
