import Foundation
import Testing
import TestSupport
@testable import Config
@testable import Values
@testable import Webhook

/// `WEBHOOK_BODY_TEMPLATE`: values escaped for JSON strings whatever they hold, the variables
/// and sections documented, a template that cannot render JSON refused at start, and the two
/// shipped examples.
@Suite("Webhook body template")
struct WebhookBodyTemplateTests {
    static func template(_ source: String, appName: String = "一键打卡") throws(ConfigurationError) -> WebhookBodyTemplate {
        try WebhookBodyTemplate(WebhookSettings.BodyTemplate(source: source, path: "test.mustache"), appName: appName)
    }

    static func event(_ type: WebhookEventType = .alert, name: String = "张三", email: String = "a@example.com") throws -> WebhookEvent {
        try WebhookEvent(type: type, id: "msg_tpl", timestamp: WebhookEventTests.time,
                         payload: WebhookEventTests.payload(name: name, email: email))
    }

    static func parse(_ body: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "\(body)")
    }

    static let example = #"{"name": "{{user_name}}", "raw": "{{{user_name}}}", "days": {{miss_days}}, "to": "{{contact_emails}}", "#
        + #""list": [{{#contacts}}{{^first()}},{{/first()}}"{{email}}"{{/contacts}}], "app": "{{app_name}}"}"#

    /// What `example` renders.
    struct Example: Decodable {
        let name: String
        let raw: String
        let days: Int
        let to: String
        let list: [String]
        let app: String
    }

    @Test("hostile names and addresses inside quotes stay one JSON string each, exactly, with {{…}} and {{{…}}}")
    func escaping() throws {
        let template = try Self.template(Self.example)
        let emails = HostileInputs.emails(domain: "example.com")
        for (index, name) in (HostileInputs.names + HostileInputs.nameFragments).enumerated() {
            let email = emails[index % emails.count]
            let body = template.render(try Self.event(name: name, email: email))
            _ = try Self.parse(body)
            // JSONDecoder: JSONSerialization's strings drop a leading U+FEFF.
            let json = try JSONDecoder().decode(Example.self, from: Data(body.utf8))
            #expect(WebhookEventTests.same(json.name, name), "\(DebugText.literal(name)) → \(DebugText.literal(body))")
            #expect(WebhookEventTests.same(json.raw, name))
            #expect(WebhookEventTests.same(json.list.first, email), "\(DebugText.literal(email))")
            #expect(json.days == 3 && json.app == "一键打卡")
        }
    }

    @Test("the app name is escaped too, and a template's own text is left as written")
    func appName() throws {
        let body = try Self.template(#"{"app": "{{app_name}}", "note": "a\nb"}"#, appName: "App \"X\"\n").render(Self.event())
        let json = try Self.parse(body)
        #expect(json["app"] as? String == "App \"X\"\n")
        #expect(json["note"] as? String == "a\nb")
    }

    @Test("the variables: every documented name, the flags, the optional facts as sections, the *_json values as JSON")
    func variables() throws {
        var payload = WebhookEventTests.payload()
        payload.pausedUntil = WebhookEventTests.day.adding(days: -1)
        payload.contact = .init(email: "new@example.com", position: 3)
        let event = try WebhookEvent(type: .introduction, id: "msg_vars", timestamp: WebhookEventTests.time, payload: payload)
        let values = WebhookBodyTemplate.variables(event, appName: "App")
        let names = Set(WebhookBodyTemplate.variableNames)
        #expect(Set(values.keys).isSubset(of: names), "undocumented: \(Set(values.keys).subtracting(names))")
        #expect(names.subtracting(values.keys) == ["alert_date", "alert_message_id", "checked_in_at", "acknowledged_at", "held", "gap_days",
                                                   "release_at", "bounce", "outcome", "outcome_by", "outcome_at",
                                                   "relay", "canary_id", "reason", "sent_at"],
                "absent facts are left out")
        let source = """
            {"type": "{{type}}", "id": "{{id}}", "at": "{{timestamp}}", "intro": {{is_introduction}}, "alert": {{is_alert}},
             "paused": "{{#paused_until}}until {{paused_until}}{{/paused_until}}", "alerted": "{{^alert_date}}none{{/alert_date}}",
             "contact": "{{#contact}}{{email}} #{{position}}{{/contact}}", "count": {{contact_count}},
             "event": {{json}}, "data": {{data_json}}, "contacts": {{contacts_json}}}
            """
        let json = try Self.parse(try Self.template(source).render(event))
        #expect(json["type"] as? String == "contact.introduction" && json["id"] as? String == "msg_vars")
        #expect(json["at"] as? String == "2026-01-13T01:00:00Z")
        #expect(json["intro"] as? Bool == true && json["alert"] as? Bool == false)
        #expect(json["paused"] as? String == "until 2026-01-12" && json["alerted"] as? String == "none")
        #expect(json["contact"] as? String == "new@example.com #3" && json["count"] as? Int == 2)
        #expect(try JSONSerialization.data(withJSONObject: json["event"]!, options: .sortedKeys)
                == JSONSerialization.data(withJSONObject: try Self.parse(event.jsonBody), options: .sortedKeys))
        #expect((json["data"] as? [String: Any])?["user_name"] as? String == "张三")
        #expect((json["contacts"] as? [[String: Any]])?.count == 2)
    }

    @Test("a template that cannot render JSON is refused, naming WEBHOOK_BODY_TEMPLATE",
          arguments: [#"{"name": {{user_name}}}"#, #"{"name": "{{user_name}}""#, "text: {{user_name}}",
                      #"{{#is_alert}}{"a": 1}{{/is_alert}}"#, #"{"checked": "{{checked_in_at}}", "d": {{paused_until}}}"#,
                      #"{"m": {{alert_message_id}}}"#])
    func notJSON(_ source: String) {
        do {
            _ = try Self.template(source)
            Issue.record("accepted \(source)")
        } catch {
            #expect(error.setting == "WEBHOOK_BODY_TEMPLATE" && error.reason.contains("test.mustache"), "\(error)")
            #expect(error.reason.contains("does not render JSON"))
        }
    }

    @Test("a refusal says where, and never quotes the template, which may hold a gateway's key")
    func refusalQuotesNothing() throws {
        let key = "Gateway-Key-0042"
        for source in [#"{"key": "\#(key)", "n": {{user_name}}}"#, #"{"key": "\#(key)",\#n "n": "{{#user_name}}"}"#, "\(key) {{#a}}{{/b}}"] {
            do {
                _ = try Self.template(source)
                Issue.record("accepted \(source)")
            } catch {
                #expect(!error.description.contains(key) && !error.description.contains("Gateway"), "\(error)")
                #expect(error.reason.contains("line") || error.reason.contains("character"), "\(error)")
            }
        }
        do { _ = try Self.template("{\n\"a\": \"{{#user_name}}\"}") } catch {
            #expect(error.reason.hasSuffix("at line 2, column 6") || error.reason.contains("line 2"), "\(error)")
        }
    }

    @Test("broken Mustache, an empty file, a missing or non-UTF-8 file are refused, naming WEBHOOK_BODY_TEMPLATE")
    func broken() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tpl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let files: [(String, [UInt8]?)] = [("open-section", Array("{\"a\": \"{{#user_name}}\"}".utf8)),
                                           ("mismatched", Array("{{#a}}{{/b}}".utf8)), ("empty", Array(" \n".utf8)),
                                           ("binary", [0xFF, 0xFE, 0x00]), ("missing", nil)]
        for (name, bytes) in files {
            let path = folder.appendingPathComponent(name).path
            if let bytes { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
            #expect(throws: ConfigurationError.self) { try WebhookSettings.BodyTemplate(path: path) }
            do { _ = try WebhookSettings.BodyTemplate(path: path) } catch {
                #expect(error.setting == "WEBHOOK_BODY_TEMPLATE" && error.reason.contains(path), "\(error)")
            }
        }
        #expect(throws: ConfigurationError.self) { try WebhookSettings.BodyTemplate(path: folder.path) }
    }

    /// `notifier.alerts_held` of 200 users over the 11th and 12th.
    static func alertsHeld() throws -> WebhookEvent {
        try WebhookEvent.alertsHeld(id: "msg_h", timestamp: WebhookEventTests.time,
                                    held: .init(runDate: WebhookEventTests.day, count: 200,
                                                gapDays: [WebhookEventTests.day.adding(days: -2), WebhookEventTests.day.adding(days: -1)],
                                                releaseAt: WebhookEventTests.time))
    }

    /// `notifier.canary_lost` of canary 42 through a relay.
    static func canaryLost() throws -> WebhookEvent {
        try WebhookEvent.canaryLost(id: "msg_c", timestamp: WebhookEventTests.time,
                                    canary: .init(relay: "smtp://relay.example:587", canaryID: 42, reason: "not_back", sentAt: WebhookEventTests.time))
    }

    /// The shipped examples, as the configuration would read them.
    static func shipped(_ name: String) throws -> WebhookBodyTemplate {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/webhooks/\(name)").path
        return try WebhookBodyTemplate(WebhookSettings.BodyTemplate(path: path), appName: "一键打卡")
    }

    @Test("the WeCom example: one markdown message per event type, the name escaped inside it")
    func weCom() throws {
        let template = try Self.shipped("wecom-markdown.json.mustache")
        for type in WebhookEventType.allCases {
            let event = type == .ping ? try WebhookEvent.ping(id: "msg_p", timestamp: WebhookEventTests.time)
                : type == .alertsHeld ? try Self.alertsHeld() : type == .canaryLost ? try Self.canaryLost()
                : try Self.event(type, name: "张\"三\"\n<font>")
            let json = try Self.parse(template.render(event))
            #expect(json["msgtype"] as? String == "markdown")
            let content = try #require((json["markdown"] as? [String: Any])?["content"] as? String)
            #expect(content.contains("【一键打卡】"), "\(type): \(content)")
            if ![.ping, .alertsHeld, .canaryLost].contains(type) { #expect(content.contains("张\"三\"\n<font>"), "\(type): \(content)") }
            if type == .canaryLost { #expect(content.contains("smtp://relay.example:587") && content.contains("not_back"), "\(content)") }
            if type == .alertsHeld { #expect(content.contains("200 条提醒已暂缓") && content.contains("2026-01-11, 2026-01-12"), "\(content)") }
            if type == .alert { #expect(content.contains("已连续 3 天未签到") && content.contains("2026-01-10")) }
        }
    }

    @Test("the SMS gateway example: reference, template code and parameters for each event type")
    func smsGateway() throws {
        let template = try Self.shipped("sms-gateway.json.mustache")
        let codes: [WebhookEventType: String] = [.alert: "ALERT", .allClear: "ALL_CLEAR", .followUp: "FOLLOW_UP", .reminder: "REMINDER",
                                                 .introduction: "INTRODUCTION", .acknowledged: "ACKNOWLEDGED", .undeliverable: "UNDELIVERABLE", .ping: "PING",
                                                 .alertsHeld: "ALERTS_HELD", .escalated: "ESCALATED", .outcome: "OUTCOME", .unheard: "UNHEARD",
                                                 .canaryLost: "CANARY_LOST"]
        for type in WebhookEventType.allCases {
            let event = type == .ping ? try WebhookEvent.ping(id: "msg_p", timestamp: WebhookEventTests.time)
                : type == .alertsHeld ? try Self.alertsHeld() : type == .canaryLost ? try Self.canaryLost() : try Self.event(type)
            let json = try Self.parse(template.render(event))
            #expect(json["reference"] as? String == event.id && json["event"] as? String == type.rawValue)
            #expect(json["template_code"] as? String == "SILEME_" + (codes[type] ?? "?"))
            #expect(json["to"] as? String == (type == .reminder || type == .undeliverable ? "user"
                                              : type == .alertsHeld || type == .unheard || type == .canaryLost ? "operator" : "contacts"))
            let contacts = try #require(json["contacts"] as? [[String: Any]])
            #expect(contacts.count == (type == .ping || type == .alertsHeld || type == .canaryLost ? 0 : 2))
            if type == .alert {
                #expect((json["template_params"] as? [String: String]) == ["name": "张三", "days": "3", "last_check_in": "2026-01-10"])
                #expect((json["text"] as? String)?.contains("已连续 3 天未签到") == true)
            }
        }
    }
}
