import Foundation
import Testing
import TestSupport
@testable import Values
@testable import Webhook

/// The event's JSON body: parsed back with JSONSerialization, every field where it belongs, in a
/// stable order, whatever the app's data holds.
@Suite("Webhook event")
struct WebhookEventTests {
    static let day = CalendarDate(year: 2026, month: 1, day: 13)!
    static let time = Date(timeIntervalSince1970: 1_768_266_000)  // 2026-01-13T01:00:00Z

    static func payload(name: String = "张三", email: String = "a@example.com") -> WebhookEvent.Payload {
        WebhookEvent.Payload(userID: "3f0e6a5c-1111-4222-8333-944445555666", userName: name, runDate: day,
                             lastCheckInDate: day.adding(days: -3), missDays: 3,
                             contacts: [.init(email: email, position: 1), .init(email: "b@example.com", position: 2)])
    }

    static func parse(_ body: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }

    /// Exact equality, scalar by scalar (String's == would take "é" and "e\u{301}" as equal).
    static func same(_ a: String?, _ b: String) -> Bool {
        guard let a else { return false }
        return Array(a.unicodeScalars) == Array(b.unicodeScalars)
    }

    /// The body's fields the hostile test reads back, decoded with JSONDecoder (JSONSerialization's
    /// strings drop a leading U+FEFF).
    struct Decoded: Decodable {
        struct Contact: Decodable { let email: String; let position: Int }
        struct Fields: Decodable {
            let user_name: String
            let alert_message_id: String?
            let contacts: [Contact]
        }
        let type: String
        let data: Fields
    }

    @Test("an alert: type, timestamp and every data field, in order, no white space")
    func alert() throws {
        let event = try WebhookEvent(type: .alert, id: "msg_20260113_alert_1", timestamp: Self.time, payload: Self.payload())
        #expect(event.jsonBody == #"{"type":"checkin.alert","timestamp":"2026-01-13T01:00:00Z","data":{"#
                + #""user_id":"3f0e6a5c-1111-4222-8333-944445555666","user_name":"张三","run_date":"2026-01-13","#
                + #""last_check_in_date":"2026-01-10","miss_days":3,"contacts":[{"email":"a@example.com","position":1},"#
                + #"{"email":"b@example.com","position":2}]}}"#)
        let json = try Self.parse(event.jsonBody)
        #expect(json["type"] as? String == "checkin.alert")
        let data = try #require(json["data"] as? [String: Any])
        #expect(data["miss_days"] as? Int == 3)
        let contacts = try #require(data["contacts"] as? [[String: Any]])
        #expect(contacts.map { $0["email"] as? String } == ["a@example.com", "b@example.com"])
        #expect(contacts.map { $0["position"] as? Int } == [1, 2])
        #expect(Set(data.keys) == ["user_id", "user_name", "run_date", "last_check_in_date", "miss_days", "contacts"])
    }

    @Test("the optional facts appear when given, in their order; no check-in is null")
    func optionalFacts() throws {
        var payload = Self.payload()
        payload.lastCheckInDate = nil
        payload.pausedUntil = Self.day.adding(days: -1)
        payload.alertDate = Self.day.adding(days: 1)
        payload.alertMessageID = "sileme.20260113.abcd@sileme.app"
        payload.checkedInAt = Self.time.addingTimeInterval(3600.75)
        payload.contact = .init(email: "new@example.com", position: 3)
        let body = try WebhookEvent(type: .allClear, id: "msg_x", timestamp: Self.time, payload: payload).jsonBody
        let data = try #require(try Self.parse(body)["data"] as? [String: Any])
        #expect(data["last_check_in_date"] is NSNull)
        #expect(data["paused_until"] as? String == "2026-01-12")
        #expect(data["alert_date"] as? String == "2026-01-14")
        #expect(data["alert_message_id"] as? String == "sileme.20260113.abcd@sileme.app")
        #expect(data["checked_in_at"] as? String == "2026-01-13T02:00:00Z")
        #expect((data["contact"] as? [String: Any])?["email"] as? String == "new@example.com")
        let order = ["\"contacts\"", "\"paused_until\"", "\"alert_date\"", "\"alert_message_id\"", "\"checked_in_at\"", "\"contact\""]
            .map { body.range(of: $0)!.lowerBound }
        #expect(order == order.sorted())
    }

    @Test("each type's name in the body", arguments: WebhookEventType.allCases)
    func types(_ type: WebhookEventType) throws {
        let event = type == .ping ? try WebhookEvent.ping(id: "msg_ping", timestamp: Self.time)
            : try WebhookEvent(type: type, id: "msg_t", timestamp: Self.time, payload: Self.payload())
        let json = try Self.parse(event.jsonBody)
        #expect(json["type"] as? String == type.rawValue)
        #expect(json["timestamp"] as? String == "2026-01-13T01:00:00Z")
        if type == .ping {
            #expect((json["data"] as? [String: Any])?["notifier_version"] as? String == NotifierVersion.current)
        }
    }

    @Test("hostile names and addresses come back exactly, and the body stays one line of JSON")
    func hostile() throws {
        let names = HostileInputs.names + HostileInputs.nameFragments
        let emails = HostileInputs.emails(domain: "example.com")
        for (index, name) in names.enumerated() {
            let email = emails[index % emails.count]
            var payload = Self.payload(name: name, email: email)
            payload.alertMessageID = name
            let body = try WebhookEvent(type: .alert, id: "msg_h", timestamp: Self.time, payload: payload).jsonBody
            #expect(!body.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{2028}" || $0 == "\u{2029}" },
                    "\(DebugText.literal(name))")
            _ = try Self.parse(body)
            let data = try JSONDecoder().decode(Decoded.self, from: Data(body.utf8)).data
            #expect(Self.same(data.user_name, name), "\(DebugText.literal(name))")
            #expect(Self.same(data.alert_message_id, name))
            #expect(Self.same(data.contacts.first?.email, email), "\(DebugText.literal(email))")
        }
    }

    @Test("the same values make the same bytes (a retry sends what the first attempt sent)")
    func stable() throws {
        let a = try WebhookEvent(type: .followUp, id: "msg_s", timestamp: Self.time, payload: Self.payload())
        let b = try WebhookEvent(type: .followUp, id: "msg_s", timestamp: Self.time, payload: Self.payload())
        #expect(a.jsonBody == b.jsonBody && a == b)
    }

    @Test("an id that is not header-safe is refused",
          arguments: ["", "msg 1", "msg\r\nX-Evil: 1", "msg,1", "msg\"1", "ид", String(repeating: "a", count: 129), "msg/1"])
    func invalidID(_ id: String) {
        #expect(throws: WebhookEvent.InvalidID.self) { try WebhookEvent(type: .alert, id: id, timestamp: Self.time, payload: Self.payload()) }
        #expect(!WebhookEvent.isValidID(id))
    }

    @Test("ids of letters, digits and . _ : - up to 128 are accepted",
          arguments: ["a", "msg_p5jXN8AQM9LWM0D4loKWxJek", "sileme:20260113:alert:3f0e6a5c-1111", "x.y-z_1", String(repeating: "a", count: 128)])
    func validID(_ id: String) throws {
        #expect(try WebhookEvent(type: .alert, id: id, timestamp: Self.time, payload: Self.payload()).id == id)
    }

    @Test("checkin.escalated: each contact with its tier, whether the first alert reached it and whether it bounced, after email and position")
    func escalated() throws {
        var payload = Self.payload()
        payload.contacts = [.init(email: "a@example.com", position: 1, streak: .init(tier: 1, alerted: true, bounced: false)),
                            .init(email: "b@example.com", position: 2, streak: .init(tier: 1, alerted: true, bounced: true)),
                            .init(email: "n@example.com", position: 3, streak: .init(tier: 2, alerted: false, bounced: false))]
        payload.alertMessageID = "<alert-1@notify.example.com>"
        let event = try WebhookEvent(type: .escalated, id: "msg_20260113_escalation_1", timestamp: Self.time, payload: payload)
        #expect(event.dataJSON.contains(#""contacts":[{"email":"a@example.com","position":1,"tier":1,"alerted":true,"bounced":false},"#
                                        + #"{"email":"b@example.com","position":2,"tier":1,"alerted":true,"bounced":true},"#
                                        + #"{"email":"n@example.com","position":3,"tier":2,"alerted":false,"bounced":false}]"#), "\(event.jsonBody)")
        let body = try Self.parse(event.jsonBody)
        #expect(body["type"] as? String == "checkin.escalated")
        let contacts = try #require((body["data"] as? [String: Any])?["contacts"] as? [[String: Any]])
        #expect(contacts.map { $0["tier"] as? Int } == [1, 1, 2])
        #expect(contacts.map { $0["alerted"] as? Bool } == [true, true, false])
        #expect(contacts.map { $0["bounced"] as? Bool } == [false, true, false])
        // Other events' contacts stay {"email","position"}.
        #expect(!(try WebhookEvent(type: .alert, id: "msg_1", timestamp: Self.time, payload: Self.payload())).jsonBody.contains("tier"))
    }

    @Test("each contact's language after its email and position, where the run knows it")
    func contactLanguage() throws {
        var payload = Self.payload()
        payload.contacts = [.init(email: "son@example.co.uk", position: 1, language: "en"),
                            .init(email: "n@example.com", position: 2, streak: .init(tier: 2, alerted: false, bounced: false), language: "zh-Hant"),
                            .init(email: "c@example.com", position: 3)]
        let event = try WebhookEvent(type: .escalated, id: "msg_20260113_escalation_1", timestamp: Self.time, payload: payload)
        #expect(event.dataJSON.contains(#""contacts":[{"email":"son@example.co.uk","position":1,"language":"en"},"#
                                        + #"{"email":"n@example.com","position":2,"language":"zh-Hant","tier":2,"alerted":false,"bounced":false},"#
                                        + #"{"email":"c@example.com","position":3}]"#), "\(event.jsonBody)")
    }

    @Test("notifier.alerts_held: the operator's facts, no user's")
    func alertsHeld() throws {
        let event = try WebhookEvent.alertsHeld(id: "held_7", timestamp: Self.time,
                                                held: .init(runDate: Self.day, count: 200, gapDays: [Self.day.adding(days: -2), Self.day.adding(days: -1)],
                                                            releaseAt: Self.time.addingTimeInterval(6 * 3600)))
        #expect(event.jsonBody == """
            {"type":"notifier.alerts_held","timestamp":"2026-01-13T01:00:00Z","data":{"run_date":"2026-01-13","held":200,\
            "gap_days":["2026-01-11","2026-01-12"],"release_at":"2026-01-13T07:00:00Z"}}
            """)
        #expect(event.payload == nil)
    }

    @Test("notifier.canary_lost: the relay, the canary, why and when it was sent; no user's facts")
    func canaryLost() throws {
        let event = try WebhookEvent.canaryLost(id: "canary_9", timestamp: Self.time,
                                                canary: .init(relay: "smtp://relay.example:587", canaryID: 9, reason: "not_back",
                                                              sentAt: Self.time.addingTimeInterval(-900)))
        #expect(event.jsonBody == """
            {"type":"notifier.canary_lost","timestamp":"2026-01-13T01:00:00Z","data":{"relay":"smtp://relay.example:587","canary_id":9,\
            "reason":"not_back","sent_at":"2026-01-13T00:45:00Z"}}
            """)
        #expect(event.payload == nil)
    }
}
