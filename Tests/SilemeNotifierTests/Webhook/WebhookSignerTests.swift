import Foundation
import Testing
import Hashing
@testable import Config
@testable import Values
@testable import Webhook

/// The Standard Webhooks signature: HMAC-SHA256 against RFC 4231's vectors, the published
/// Standard Webhooks (Svix) example, and the secret's accepted and refused forms.
@Suite("Webhook signer")
struct WebhookSignerTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    /// RFC 4231 §4.2–4.8: (key, data, HMAC-SHA256); case 5's is truncated to 128 bits there.
    static let rfc4231: [(key: [UInt8], data: [UInt8], mac: String)] = [
        ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (Array(1...25), [UInt8](repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        ([UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8), "a3b6167473100ee06e0c796c2955552b"),
        ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ([UInt8](repeating: 0xaa, count: 131),
         Array(("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be "
                + "hashed before being used by the HMAC algorithm.").utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test("HMAC-SHA256 gives RFC 4231's test vectors", arguments: 0..<7)
    func rfc4231(_ index: Int) {
        let vector = Self.rfc4231[index]
        let mac = HMACSHA256.mac(key: vector.key, message: vector.data)
        #expect(mac.count == 32)
        #expect(Self.hex(mac).hasPrefix(vector.mac), "test case \(index + 1)")
        #expect(vector.mac.count == 64 || index == 4)
    }

    static let svixSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test("the Standard Webhooks (Svix) example: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    func publishedExample() throws {
        let signer = WebhookSigner(key: try WebhookSettings.SigningKey(secret: Secret(Self.svixSecret)))
        #expect(signer.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330, body: #"{"test": 2432232314}"#)
                == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        // The same key given bare, with padding, or with white space around it signs the same.
        for form in ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", " whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"] {
            #expect(try WebhookSettings.SigningKey(secret: Secret(form)) == WebhookSettings.SigningKey(secret: Secret(Self.svixSecret)))
        }
    }

    @Test("the request shown in docs/webhooks.md: its body, length and signature are the notifier's")
    func documentedRequest() throws {
        let day = CalendarDate(year: 2026, month: 1, day: 13)!
        let payload = WebhookEvent.Payload(userID: "3f0e6a5c-1111-4222-8333-944445555666", userName: "张三", runDate: day,
                                           lastCheckInDate: day.adding(days: -3), missDays: 3,
                                           contacts: [.init(email: "mum@example.com", position: 1), .init(email: "li@example.com", position: 2)])
        let event = try WebhookEvent(type: .alert, id: "msg_20260113_alert_3f0e6a5c", timestamp: Date(timeIntervalSince1970: 1_768_266_000),
                                     payload: payload)
        let signer = WebhookSigner(key: try WebhookSettings.SigningKey(secret: Secret(Self.svixSecret)))
        let doc = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/webhooks.md"), encoding: .utf8)
        #expect(doc.contains("    " + event.jsonBody + "\n"))
        #expect(doc.contains("Content-Length: \(event.jsonBody.utf8.count)\n"))
        #expect(doc.contains("webhook-signature: \(signer.signature(id: event.id, timestamp: 1_768_266_000, body: event.jsonBody))\n"))
    }

    @Test("the signature covers the id, the timestamp and every byte of the body")
    func coversEverything() throws {
        let signer = WebhookSigner(key: try WebhookSettings.SigningKey(secret: Secret(Self.svixSecret)))
        let base = signer.signature(id: "msg_1", timestamp: 1_700_000_000, body: "{\"a\":\"张三\"}")
        let changed = [
            signer.signature(id: "msg_2", timestamp: 1_700_000_000, body: "{\"a\":\"张三\"}"),
            signer.signature(id: "msg_1", timestamp: 1_700_000_001, body: "{\"a\":\"张三\"}"),
            signer.signature(id: "msg_1", timestamp: 1_700_000_000, body: "{\"a\":\"张四\"}"),
            signer.signature(id: "msg_1", timestamp: 1_700_000_000, body: "{\"a\":\"张三\"} "),
            // The separators are part of the content: "msg_1" + "." cannot be shifted into the timestamp.
            signer.signature(id: "msg_1.1", timestamp: 700_000_000, body: "{\"a\":\"张三\"}"),
        ]
        #expect(Set(changed + [base]).count == changed.count + 1)
        #expect(base.hasPrefix("v1,") && Data(base64Encoded: String(base.dropFirst(3)))?.count == 32)
    }

    @Test("padded and unpadded base64 of every length from 24 to 40 bytes decode to the same key")
    func paddingForms() throws {
        for count in 24...40 {
            let key = (0..<count).map { UInt8(($0 * 37 + count) & 0xFF) }
            let padded = Data(key).base64EncodedString()
            let unpadded = String(padded.prefix { $0 != "=" })
            for form in [padded, unpadded, "whsec_" + padded, "whsec_" + unpadded] {
                #expect(try WebhookSettings.SigningKey(secret: Secret(form)).bytes == key, "\(count) bytes as \(form)")
            }
        }
    }

    @Test("a secret that is not base64, or too short or long a key, is refused without quoting it",
          arguments: ["", "whsec_", "whsec_!!!!", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS-", "Bearer MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS w", "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwA",
                      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw===", "whsec_c2hvcnQta2V5", "c2hvcnQta2V5LXNlY3JldA==",
                      "whsec_" + Data(repeating: 7, count: 513).base64EncodedString(), "whsec_MfKQ9r8G=KYqrTwjUPD8ILPZIo2LaLaSw"])
    func refused(_ secret: String) {
        do {
            _ = try WebhookSettings.SigningKey(secret: Secret(secret))
            Issue.record("accepted \(secret.debugDescription)")
        } catch {
            let words = error.description
            #expect(words.contains("not shown"))
            let body = secret.replacingOccurrences(of: "whsec_", with: "").replacingOccurrences(of: "WHSEC_", with: "")
            #expect(body.count < 4 || !words.contains(body.prefix(12)), "\(words)")
        }
    }

    @Test("the key never prints itself")
    func redacted() throws {
        let key = try WebhookSettings.SigningKey(secret: Secret(Self.svixSecret))
        for text in ["\(key)", String(reflecting: key), "\(WebhookSigner(key: key))", String(reflecting: WebhookSigner(key: key))] {
            #expect(!text.contains("MfKQ9r8G") && !text.contains("49, 242"), "\(text)")
        }
    }
}
