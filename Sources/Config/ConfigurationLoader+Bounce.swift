import Foundation
import Values

extension ConfigurationLoader {
    /// The settings this file reads.
    static let bounceKeys = [
        "BOUNCE_ADDRESS", "BOUNCE_SECRET", "BOUNCE_SECRET_FILE", "BOUNCE_MAILBOX", "BOUNCE_PASSWORD", "BOUNCE_PASSWORD_FILE",
        "BOUNCE_POLL_SECONDS", "BOUNCE_CA_FILE",
    ]

    /// Reads the bounce settings into `config` (docs/bounces.md). Unset `BOUNCE_ADDRESS`
    /// leaves the feature off, and then any other `BOUNCE_*` is refused rather than ignored (an
    /// operator who set a mailbox expects it read). Set, it needs a key of at least 32 characters
    /// and a mailbox; an IMAP or POP3 mailbox needs a password, which is never quoted in an error, and
    /// may name the certificate to verify its server with (`BOUNCE_CA_FILE`, a readable PEM file).
    func loadBounce(_ values: [String: String], _ settings: SettingsReader, into config: inout NotifierConfiguration) throws(ConfigurationError) {
        let given = try settings.string("BOUNCE_ADDRESS").flatMap { $0.isEmpty ? nil : $0 }
        let mailboxText = try settings.string("BOUNCE_MAILBOX").flatMap { $0.isEmpty ? nil : $0 }
        let mailbox = try mailboxText.map { (text) throws(ConfigurationError) in try Self.bounceMailbox(text) }
        let poll = try settings.integer("BOUNCE_POLL_SECONDS", in: 5...86_400)
        let caFile = try settings.certificateFile("BOUNCE_CA_FILE")
        let secret = try sourcedSecret(values, key: "BOUNCE_SECRET", credential: "bounce-secret")
        if let secret, secret.secret.value.utf8.count < 32 {
            throw ConfigurationError(setting: secret.setting, reason: "must be at least 32 characters (for example `openssl rand -hex 32`)")
        }
        let password = try sourcedSecret(values, key: "BOUNCE_PASSWORD", credential: "bounce-password")
        guard let given else {
            let stray = ["BOUNCE_MAILBOX", "BOUNCE_POLL_SECONDS", "BOUNCE_SECRET", "BOUNCE_SECRET_FILE", "BOUNCE_PASSWORD", "BOUNCE_PASSWORD_FILE",
             "BOUNCE_CA_FILE"]
                .first { !(values[$0] ?? "").isEmpty }
            if let stray {
                throw ConfigurationError(setting: stray, reason: "is set but BOUNCE_ADDRESS is not (set it to read bounces, or remove \(stray))")
            }
            return
        }
        let address: EmailAddress
        do { address = try EmailAddress(validating: given) } catch {
            throw ConfigurationError(setting: "BOUNCE_ADDRESS", reason: "not a valid address: \(error.reason)")
        }
        guard !address.localPart.contains("+") else {
            throw ConfigurationError(setting: "BOUNCE_ADDRESS", reason: "must not contain + (each message's tag is added after a +)")
        }
        guard let secret else {
            throw ConfigurationError(setting: "BOUNCE_SECRET", reason: "is required when BOUNCE_ADDRESS is set "
                                     + "(BOUNCE_SECRET, BOUNCE_SECRET_FILE or the bounce-secret credential)")
        }
        guard let mailbox else {
            throw ConfigurationError(setting: "BOUNCE_MAILBOX", reason: "is required when BOUNCE_ADDRESS is set "
                                     + "(maildir:/path, imaps://user@host/INBOX or pop3s://user@host)")
        }
        switch (mailbox, password) {
        case (.maildir, .some(let password)):
            throw ConfigurationError(setting: password.setting, reason: "is for an IMAP or POP3 mailbox; BOUNCE_MAILBOX is a Maildir")
        case (.imap, nil), (.pop3, nil):
            throw ConfigurationError(setting: "BOUNCE_PASSWORD_FILE", reason: "is required for an IMAP or POP3 BOUNCE_MAILBOX "
                                     + "(BOUNCE_PASSWORD_FILE, BOUNCE_PASSWORD or the bounce-password credential)")
        default: break
        }
        if case .maildir = mailbox, caFile != nil {
            throw ConfigurationError(setting: "BOUNCE_CA_FILE", reason: "is for an IMAP or POP3 mailbox; BOUNCE_MAILBOX is a Maildir")
        }
        var bounce = BounceSettings(address: address, secret: secret.secret, mailbox: mailbox, password: password?.secret)
        bounce.pollSeconds = poll ?? bounce.pollSeconds
        bounce.caFile = caFile
        config.bounce = bounce
    }

    /// `BOUNCE_MAILBOX` read: `maildir:/abs/path`, `imaps://user@host[:port][/FOLDER]` or
    /// `pop3s://user@host[:port]`; `imap://` and `pop3://` (no TLS) only on a loopback host, as a
    /// password must not cross a network in clear. A password in the URL is refused without
    /// quoting the URL, since it would then be in every log line that names the mailbox.
    static func bounceMailbox(_ text: String) throws(ConfigurationError) -> BounceSettings.Mailbox {
        let setting = "BOUNCE_MAILBOX"
        if text.hasPrefix("maildir:") {
            let path = String(text.dropFirst("maildir:".count))
            guard path.hasPrefix("/"), !path.contains("\0") else {
                throw ConfigurationError(setting: setting, reason: "a Maildir must be an absolute path, maildir:/var/mail/bounces (got \"\(text)\")")
            }
            return .maildir(path: path)
        }
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(),
              ["imap", "imaps", "pop3", "pop3s"].contains(scheme) else {
            throw ConfigurationError(setting: setting, reason: "must be maildir:/path, imaps://user@host/INBOX or pop3s://user@host")
        }
        guard parts.password == nil else {
            throw ConfigurationError(setting: setting, reason: "must not hold a password (put it in BOUNCE_PASSWORD_FILE or the bounce-password credential)")
        }
        guard let user = parts.user, !user.isEmpty else {
            throw ConfigurationError(setting: setting, reason: "must name the login, \(scheme)://user@host (got \"\(text)\")")
        }
        guard let host = parts.host, !host.isEmpty, parts.query == nil, parts.fragment == nil else {
            throw ConfigurationError(setting: setting, reason: "must be \(scheme)://user@host[:port] with no query or fragment (got \"\(text)\")")
        }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let tls: TLSMode = scheme.hasSuffix("s") ? .tls : .none
        guard tls == .tls || Self.isLoopback(bareHost) else {
            throw ConfigurationError(setting: setting, reason: "\(scheme):// sends the password in clear: use \(scheme)s:// (plain \(scheme) only to a loopback host)")
        }
        let isIMAP = scheme.hasPrefix("imap")
        let defaultPort = isIMAP ? (tls == .tls ? 993 : 143) : (tls == .tls ? 995 : 110)
        if let port = parts.port, !(1...65535).contains(port) {
            throw ConfigurationError(setting: setting, reason: "the port must be from 1 to 65535 (got \(port))")
        }
        var folder = parts.path
        while folder.hasPrefix("/") { folder.removeFirst() }
        guard isIMAP || folder.isEmpty else {
            throw ConfigurationError(setting: setting, reason: "a POP3 mailbox has no folder: pop3s://user@host[:port] (got \"\(text)\")")
        }
        guard !folder.contains(where: { $0 == ";" || $0 == "?" || $0.isNewline }) else {
            throw ConfigurationError(setting: setting, reason: "the IMAP folder must be a plain name such as INBOX (got \"\(folder)\")")
        }
        let server = BounceSettings.Server(host: bareHost, port: parts.port ?? defaultPort, user: user, tls: tls,
                                           folder: isIMAP ? (folder.isEmpty ? "INBOX" : folder) : "")
        return isIMAP ? .imap(server) : .pop3(server)
    }

    /// Whether `host` is this machine: `localhost`, 127.0.0.0/8 or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let lower = host.lowercased()
        if lower == "localhost" || lower == "::1" { return true }
        let octets = lower.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
