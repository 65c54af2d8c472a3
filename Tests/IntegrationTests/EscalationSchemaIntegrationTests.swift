import Foundation
import Testing

/// Migration 024 on real PostgreSQL (docs/escalation.md): the contacts' tier, the new kinds, and
/// the streak's row that the trigger makes when an alert is accepted — once per streak, whoever
/// records it — and makes due at once when every accepted alert of the streak bounced.
@Suite("Escalation: the schema and its trigger", .enabled(if: TestEnvironment.enabled))
struct EscalationSchemaIntegrationTests {
    static let day = "2026-01-13"

    /// Inserts one delivery row of the streak of `day` for `contact`, as a run claims it.
    static func claim(_ db: TestDatabase, _ user: String, _ contact: String, kind: String = "alert", channel: String = "email") throws {
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, kind, channel, contact, email_sent, status, consecutive_miss_days,
                                           last_check_in_date)
            VALUES ($1, $2, $3, $4, $5, false, 'sending', 2, '2026-01-10')
            """, [user, day, kind, channel, contact])
    }

    /// Records the row of `contact` as accepted at `at`.
    static func accept(_ db: TestDatabase, _ user: String, _ contact: String, at: String, channel: String = "email") throws {
        try db.query("""
            UPDATE notification_logs SET email_sent = true, status = 'sent', sent_at = $3::timestamptz
            WHERE user_id = $1 AND contact = $2 AND kind = 'alert' AND channel = $4
            """, [user, contact, at, channel])
    }

    static func streak(_ db: TestDatabase, _ user: String) throws -> [[String?]] {
        try db.query("""
            SELECT alert_date::text, last_check_in_date::text, first_sent_at = '2026-01-13 01:00:00+00',
                   CASE WHEN clock_at = '-infinity' THEN 'at once' WHEN clock_at = first_sent_at THEN 'first sent' ELSE clock_at::text END, stage
            FROM sileme.escalations WHERE user_id = $1
            """, [user])
    }

    @Test("a tier is 1 unless the app says 2; any other is refused; the new kinds are accepted, an unknown one is not")
    func tiersAndKinds() throws {
        let db = try TestDatabase()
        let user = try db.addUser(name: "独居者", email: "old@example.com")
        try db.query("INSERT INTO emergency_contacts (user_id, email) VALUES ($1, 'a@example.com')", [user])
        try db.query("INSERT INTO emergency_contacts (user_id, email, tier) VALUES ($1, 'n@example.com', 2)", [user])
        #expect(try db.query("SELECT email, tier::text FROM emergency_contacts WHERE user_id = $1 ORDER BY id", [user])
                == [["a@example.com", "1"], ["n@example.com", "2"]])
        for tier in ["0", "3"] {
            #expect(throws: (any Error).self) {
                try db.query("INSERT INTO emergency_contacts (user_id, email, tier) VALUES ($1, 'x\(tier)@example.com', \(tier))", [user])
            }
        }
        for kind in ["escalation", "outcome_ok", "outcome_unreachable", "alert", "acknowledged"] {
            try Self.claim(db, user, "\(kind)@example.com", kind: kind)
        }
        try Self.claim(db, user, "", kind: "unheard", channel: "webhook")
        #expect(throws: (any Error).self) { try Self.claim(db, user, "z@example.com", kind: "escalated") }
    }

    @Test("an alert row the app wrote without L: the streak's L is read from m")
    func withoutL() throws {
        let db = try TestDatabase()
        let user = try db.addUser(name: "独居者", email: "a@example.com")
        try db.query("""
            INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, contact, sent_at)
            VALUES ($1, $2, true, 2, 'a@example.com', '2026-01-13 01:00:00+00')
            """, [user, Self.day])
        #expect(try Self.streak(db, user) == [[Self.day, "2026-01-10", "t", "first sent", "alerted"]])
    }

    @Test("the first accepted e-mail alert makes the streak's row; later ones, unsent rows and webhook alerts do not change it")
    func rowPerStreak() throws {
        let db = try TestDatabase()
        let user = try db.addUser(name: "独居者", email: "a@example.com")
        for contact in ["a@example.com", "b@example.com"] { try Self.claim(db, user, contact) }
        try Self.claim(db, user, "", channel: "webhook")
        #expect(try Self.streak(db, user).isEmpty, "claimed is not accepted")
        try Self.accept(db, user, "", at: "2026-01-13 00:59:00+00", channel: "webhook")
        #expect(try Self.streak(db, user).isEmpty, "the webhook is no mail to a contact")
        try Self.accept(db, user, "a@example.com", at: "2026-01-13 01:00:00+00")
        #expect(try Self.streak(db, user) == [[Self.day, "2026-01-10", "t", "first sent", "alerted"]])
        try Self.accept(db, user, "b@example.com", at: "2026-01-13 01:05:00+00")
        #expect(try Self.streak(db, user) == [[Self.day, "2026-01-10", "t", "first sent", "alerted"]],
                "the streak counts from its first acceptance")
    }

    @Test("every accepted alert of the streak bounced: due at once; one still standing, or a streak escalated already: unchanged")
    func bounces() throws {
        let db = try TestDatabase()
        let user = try db.addUser(name: "独居者", email: "a@example.com")
        for contact in ["a@example.com", "b@example.com", "c@example.com"] { try Self.claim(db, user, contact) }
        try Self.accept(db, user, "a@example.com", at: "2026-01-13 01:00:00+00")
        try Self.accept(db, user, "b@example.com", at: "2026-01-13 01:00:00+00")
        // c's alert was never accepted (refused for good): it does not keep the streak waiting.
        try db.query("UPDATE notification_logs SET status = 'failed' WHERE contact = 'c@example.com'")
        func bounce(_ contact: String) throws {
            try db.query("UPDATE notification_logs SET status = 'bounced', bounced_at = now() WHERE user_id = $1 AND contact = $2", [user, contact])
        }
        try bounce("a@example.com")
        #expect(try Self.streak(db, user).first?[3] == "first sent", "b's alert stands")
        try bounce("b@example.com")
        #expect(try Self.streak(db, user).first?[3] == "at once")

        let other = try db.addUser(name: "Other", email: "d@example.com")
        try Self.claim(db, other, "d@example.com")
        try Self.accept(db, other, "d@example.com", at: "2026-01-13 01:00:00+00")
        try db.query("UPDATE sileme.escalations SET stage = 'escalated' WHERE user_id = $1", [other])
        try db.query("UPDATE notification_logs SET status = 'bounced' WHERE user_id = $1", [other])
        #expect(try Self.streak(db, other).first?[3] == "first sent", "the escalation came already")
    }
}
