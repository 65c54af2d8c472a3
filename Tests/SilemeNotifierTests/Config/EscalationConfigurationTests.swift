import Foundation
import Testing
@testable import Config

/// `ESCALATE_AFTER` (docs/escalation.md): on by default at 3 hours, off at zero, a whole number
/// with its unit. (Each refusal's setting is in the configuration matrix, `BadSetting`.)
@Suite("Escalation configuration")
struct EscalationConfigurationTests {
    static func load(_ env: [String: String]) throws(ConfigurationError) -> NotifierConfiguration {
        try ConfigurationLoader(environment: env, filePath: nil).load()
    }

    @Test("3 hours unless set; seconds, minutes, hours and days; zero turns it off")
    func values() throws {
        #expect(try Self.load([:]).escalateAfter == .seconds(10_800))
        let expected: [String: Duration?] = [
            "45s": .seconds(45), "90m": .seconds(5400), "3h": .seconds(10_800), "2d": .seconds(172_800), "3H": .seconds(10_800),
            "1s": .seconds(1), "10d": .seconds(864_000), "240h": .seconds(864_000), " 90m ": .seconds(5400),
            "0": nil, "00": nil, "0s": nil, "0h": nil,
        ]
        for (text, duration) in expected {
            #expect(try Self.load(["ESCALATE_AFTER": text]).escalateAfter == duration, "\(text)")
        }
        #expect(try Self.load(["ESCALATE_AFTER": ""]).escalateAfter == .seconds(10_800), "empty is unset")
    }

    @Test("a bare number, a fraction, a unit unknown or a span over 10 days is refused, naming the setting and the forms")
    func refusals() {
        for text in ["90", "1.5h", "3w", "11d", "-1h", "h"] {
            do {
                _ = try Self.load(["ESCALATE_AFTER": text])
                Issue.record("\(text) accepted")
            } catch {
                #expect(error.setting == "ESCALATE_AFTER" && error.reason.contains("\"\(text)\""), "\(error)")
            }
        }
    }
}
