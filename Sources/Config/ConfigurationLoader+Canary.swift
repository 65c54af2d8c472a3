import Values

extension ConfigurationLoader {
    /// The settings this file reads.
    static let canaryKeys = ["CANARY_EVERY", "CANARY_ADDRESS", "CANARY_WITHIN"]

    /// The shortest `CANARY_EVERY` and `CANARY_WITHIN` (a canary a second would be its own load).
    static let shortestCanary: Duration = .seconds(5)

    /// Reads the canary settings into `config` (docs/operating.md, "The canary"); after the bounce
    /// settings, which it needs. Unset or `0` `CANARY_EVERY` leaves the canary off, and then
    /// `CANARY_ADDRESS` or `CANARY_WITHIN` is refused rather than ignored. On, it needs an address,
    /// the bounce mailbox it comes back to (`BOUNCE_ADDRESS`, `BOUNCE_MAILBOX`) and SMTP relays.
    func loadCanary(_ values: [String: String], _ settings: SettingsReader, into config: inout NotifierConfiguration) throws(ConfigurationError) {
        let every = try settings.duration("CANARY_EVERY", in: .zero...(.seconds(7 * 86_400)))
        if let every, every != .zero, every < Self.shortestCanary {
            throw ConfigurationError(setting: "CANARY_EVERY", reason: "must be 0 (off) or from 5s to 7d")
        }
        let within = try settings.duration("CANARY_WITHIN", in: Self.shortestCanary...(.seconds(86_400)))
        let given = try settings.string("CANARY_ADDRESS").flatMap { $0.isEmpty ? nil : $0 }
        guard let every, every != .zero else {
            if let stray = ["CANARY_ADDRESS", "CANARY_WITHIN"].first(where: { !(values[$0] ?? "").isEmpty }) {
                throw ConfigurationError(setting: stray, reason: "is set but CANARY_EVERY is not (set it to send canaries, or remove \(stray))")
            }
            return
        }
        guard let given else {
            throw ConfigurationError(setting: "CANARY_ADDRESS", reason: "is required when CANARY_EVERY is set "
                                     + "(an address your mail system delivers into BOUNCE_MAILBOX)")
        }
        let address: EmailAddress
        do { address = try EmailAddress(validating: given) } catch {
            throw ConfigurationError(setting: "CANARY_ADDRESS", reason: "not a valid address: \(error.reason)")
        }
        guard config.bounce != nil else {
            throw ConfigurationError(setting: "CANARY_EVERY", reason: "needs the bounce mailbox the canary comes back to "
                                     + "(BOUNCE_ADDRESS and BOUNCE_MAILBOX)")
        }
        guard config.mailTransport == .smtp else {
            throw ConfigurationError(setting: "CANARY_EVERY", reason: "is for MAIL_TRANSPORT=smtp (the outbox has no relay to test)")
        }
        var canary = CanarySettings(every: every, address: address)
        canary.within = within ?? canary.within
        config.canary = canary
    }
}
