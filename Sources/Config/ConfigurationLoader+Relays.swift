import Foundation
import Values

extension ConfigurationLoader {
    /// The most relays `SMTP_FALLBACK` may list: each is tried in turn for a message whose relay
    /// failed, so a long list only lengthens the wait of a message nobody can take.
    static let mostFallbacks = 4

    /// The settings this file reads.
    static let relayKeys = ["SMTP_FALLBACK", "SMTP_FALLBACK_RETRY"]
        + (1...mostFallbacks).flatMap { ["SMTP_FALLBACK_PASSWORD_\($0)", "SMTP_FALLBACK_PASSWORD_\($0)_FILE"] }

    /// Reads `SMTP_FALLBACK` and `SMTP_FALLBACK_RETRY` into `config` (docs/delivery.md, "Fallback
    /// relays"). Each relay is a URL — `smtp://[user@]host[:port]` (STARTTLS required, port 587),
    /// `smtps://[user@]host[:port]` (implicit TLS, 465), with `?tls=none` for a relay on this
    /// machine and `?ca_file=/path` for its own certificate authority — separated by spaces or
    /// commas. Its password comes as the primary's does, by its number:
    /// `SMTP_FALLBACK_PASSWORD_N`, `_FILE`, or the credential `smtp-fallback-N-password`; a
    /// password written in the URL is refused without being repeated. The rest (timeouts, retries,
    /// workers, rate, EHLO name) is the primary's: a fallback carries the same morning's mail.
    func loadRelays(_ values: [String: String], _ settings: SettingsReader, into config: inout NotifierConfiguration) throws(ConfigurationError) {
        let list = try settings.string("SMTP_FALLBACK")?.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) ?? []
        guard list.count <= Self.mostFallbacks else {
            throw ConfigurationError(setting: "SMTP_FALLBACK", reason: "lists \(list.count) relays; at most \(Self.mostFallbacks)")
        }
        config.smtpFallbacks = []
        for (index, text) in list.enumerated() {
            var relay = try Self.relay(text, number: index + 1, primary: config.smtp)
            relay.password = try sourcedSecret(values, key: "SMTP_FALLBACK_PASSWORD_\(index + 1)",
                                               credential: "smtp-fallback-\(index + 1)-password")?.secret
            config.smtpFallbacks.append(relay)
        }
        for number in (list.count + 1)...Self.mostFallbacks {
            for key in ["SMTP_FALLBACK_PASSWORD_\(number)", "SMTP_FALLBACK_PASSWORD_\(number)_FILE"] where !(values[key] ?? "").isEmpty {
                throw ConfigurationError(setting: key, reason: "is set but SMTP_FALLBACK lists no relay \(number)")
            }
        }
        if let retry = try settings.duration("SMTP_FALLBACK_RETRY", in: .seconds(1)...(.seconds(86_400))) {
            config.smtpFallbackRetry = retry
        }
        guard config.mailTransport == .smtp || config.smtpFallbacks.isEmpty else {
            throw ConfigurationError(setting: "SMTP_FALLBACK", reason: "is for MAIL_TRANSPORT=smtp (the outbox has no relay to fall back from)")
        }
    }

    /// One relay of `SMTP_FALLBACK`, the `number`th, over `primary`'s other settings.
    static func relay(_ text: String, number: Int, primary: SMTPSettings) throws(ConfigurationError) -> SMTPSettings {
        let setting = "SMTP_FALLBACK"
        let named = "relay \(number) of SMTP_FALLBACK"
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), scheme == "smtp" || scheme == "smtps",
              let host = url.host, !host.isEmpty else {
            throw ConfigurationError(setting: setting, reason: "\(named) must be smtp://[user@]host[:port] or smtps://[user@]host[:port]")
        }
        guard url.password == nil else {
            throw ConfigurationError(setting: setting, reason: "\(named) has a password in its URL; give it as SMTP_FALLBACK_PASSWORD_\(number) "
                                     + "(or _FILE, or the smtp-fallback-\(number)-password credential), never in the URL")
        }
        guard url.path.isEmpty || url.path == "/" else {
            throw ConfigurationError(setting: setting, reason: "\(named) must have no path (got \(url.path))")
        }
        var relay = primary
        relay.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        relay.user = url.user.flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 }
        relay.password = nil
        relay.caFile = nil
        relay.tls = scheme == "smtps" ? .tls : .starttls
        for item in url.queryItems ?? [] {
            switch (item.name, item.value ?? "") {
            case ("tls", "none") where scheme == "smtp": relay.tls = .none
            case ("tls", "starttls") where scheme == "smtp": relay.tls = .starttls
            case ("ca_file", let path) where !path.isEmpty:
                relay.caFile = try SettingsReader.certificateFile(path, setting: "\(setting) (\(named), ca_file)")
            default:
                throw ConfigurationError(setting: setting, reason: "\(named): unknown or misplaced option \(item.name)=\(item.value ?? "") "
                                         + "(tls=none or tls=starttls on smtp://, ca_file=/path)")
            }
        }
        relay.port = url.port ?? relay.tls.defaultPort
        guard (1...65535).contains(relay.port) else {
            throw ConfigurationError(setting: setting, reason: "\(named) has port \(relay.port), outside 1 to 65535")
        }
        return relay
    }
}
