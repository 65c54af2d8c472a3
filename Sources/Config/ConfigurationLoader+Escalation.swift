import Foundation

extension ConfigurationLoader {
    /// The settings this file reads.
    static let escalationKeys = ["ESCALATE_AFTER"]

    /// The longest `ESCALATE_AFTER`: an alert unheard is declared so one more `ESCALATE_AFTER`
    /// later, and both steps must come while the streak's acknowledgement links still work (they
    /// expire when the streak is 30 days old).
    static let longestEscalation = Duration.seconds(10 * 86_400)

    /// Reads `ESCALATE_AFTER` into `config`: a whole number with its unit (`45s`, `90m`, `3h`,
    /// `2d`), or `0` (with a unit or without) for off. A bare number other than 0 is refused rather than guessed at: "90"
    /// could mean minutes to one operator and seconds to another. The rule holds the second tier
    /// back for the escalation only while there is one: with `0` it is alerted with the first.
    func loadEscalation(_ settings: SettingsReader, into config: inout NotifierConfiguration) throws(ConfigurationError) {
        if let text = try settings.string("ESCALATE_AFTER"), !text.isEmpty { config.escalateAfter = try Self.escalateAfter(text) }
        config.rule.secondTierWaits = config.escalateAfter != nil
    }

    /// `ESCALATE_AFTER` as written: nil for zero (off), else the duration, from 1 s to 10 days.
    static func escalateAfter(_ text: String) throws(ConfigurationError) -> Duration? {
        let duration = try SettingsReader.duration(text, setting: "ESCALATE_AFTER", in: .zero...longestEscalation)
        return duration == .zero ? nil : duration
    }
}
