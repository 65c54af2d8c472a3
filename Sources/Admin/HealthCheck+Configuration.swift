import Config
import Values

extension HealthCheck.Part {
    /// `version`: the program's.
    static let version = Self(lines: { _ in
        [Finding(subject: "version", ok: true, detail: "sileme-notifier \(NotifierVersion.current)")]
    })

    /// `configuration`: it can send (exit 78 if not), and the settings the rule runs with.
    static let configuration = Self(lines: { context in
        let configuration = context.configuration
        do throws(ConfigurationError) {
            try ConfigurationLoader.validateForSending(configuration)
            return [Finding(
                subject: "configuration", ok: true,
                detail: "\(configuration.mail.transportDescription), "
                    + "from \(configuration.fromEmail ?? ""), zone \(configuration.timeZone.identifier), "
                    + "threshold \(configuration.rule.thresholdDays) days, catch-up \(configuration.rule.catchUpDays) days, "
                    + "supersede \(configuration.rule.supersede ? "on" : "off")")]
        } catch {
            return [Finding(subject: "configuration", ok: false, detail: error.description, failure: .configuration)]
        }
    })
}
