import Foundation

/// One wrong configuration, and the setting the refusal must name: the table of the configuration
/// matrix (issue 6), shared by the loader's unit test and the executable's integration test.
///
/// `all` covers every setting the loader knows: a value of the wrong type, values out of range
/// where a range exists, other invalid values, a typo of the key in the configuration file,
/// missing, empty, non-UTF-8 and directory `*_FILE` secret files and systemd credentials. (The
/// tests run as root, for whom a mode-000 file is readable: a directory stands for an
/// unreadable file.)
public struct BadSetting: Sendable, CustomStringConvertible {
    /// What kind of mistake it is.
    public enum Kind: String, Sendable {
        case wrongType = "wrong type"
        case outOfRange = "out of range"
        case invalid = "invalid value"
        case unknownKey = "unknown key"
        case unreadableFile = "unreadable or missing file"
        case missing = "missing"
    }

    /// The setting the message must name (`SMTP_PORT`, `SMTP_PORTT`, `credential smtp-password`).
    public let setting: String
    /// The kind of mistake.
    public let kind: Kind
    /// The settings to give (in the environment, or in the configuration file).
    public let values: [String: String]
    /// Environment variables to remove from a working environment first (a secret's direct value
    /// wins over its `*_FILE`, so the `*_FILE` cases remove it).
    public let unset: [String]
    /// Whether the values can only come from the environment (line breaks, `CREDENTIALS_DIRECTORY`).
    public let environmentOnly: Bool
    /// Whether the values can only come from the configuration file (an unknown key: the
    /// environment holds many variables that are not settings).
    public var fileOnly: Bool { kind == .unknownKey }

    public var description: String {
        "\(setting) \(kind.rawValue): " + values.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(String(reflecting: $0.value).prefix(60))" }.joined(separator: " ")
    }

    init(_ setting: String, _ kind: Kind, _ values: [String: String], unset: [String] = []) {
        self.setting = setting
        self.kind = kind
        self.values = values
        self.unset = unset
        environmentOnly = values.keys.contains("CREDENTIALS_DIRECTORY")
            || values.values.contains { $0.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == "\0" } }
    }

    /// One case per value of `key`.
    static func each(_ key: String, _ kind: Kind, _ values: [String], unset: [String] = []) -> [BadSetting] {
        values.map { BadSetting(key, kind, [key: $0], unset: unset) }
    }

    /// Files the cases point at, made once per test process in a temporary folder.
    public struct Fixtures: Sendable {
        /// The folder.
        public let directory: String
        /// A file of bytes that are not UTF-8.
        public let notUTF8: String
        /// An empty file.
        public let empty: String
        /// A directory where a file is expected.
        public let folder: String
        /// A path that does not exist.
        public let missing: String
        /// A regular file where a directory is expected, and not a PEM bundle either.
        public let notPEM: String
        /// A template folder without `subject.mustache`.
        public let templatesIncomplete: String
        /// A template folder whose subject is not valid Mustache.
        public let templatesBroken: String
        /// Credential folders whose `smtp-password` / `database-url` / `webhook-secret` is a
        /// directory, empty, not UTF-8.
        public let credentials: [String: String]
        /// A webhook body template that is not valid Mustache.
        public let webhookTemplateBroken: String
        /// A webhook body template that is valid Mustache but does not render JSON.
        public let webhookTemplateNotJSON: String

        static func make() -> Fixtures {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("bad-settings-\(UUID().uuidString)").path
            let fm = FileManager.default
            func dir(_ path: String) -> String {
                try? fm.createDirectory(atPath: path, withIntermediateDirectories: true)
                return path
            }
            func file(_ path: String, _ bytes: [UInt8]) -> String {
                _ = fm.createFile(atPath: path, contents: Data(bytes))
                return path
            }
            _ = dir(base)
            let incomplete = dir(base + "/templates-incomplete")
            _ = file(incomplete + "/body.txt.mustache", Array("{{user_name}}".utf8))
            let broken = dir(base + "/templates-broken")
            _ = file(broken + "/subject.mustache", Array("{{#user_name}}".utf8))
            _ = file(broken + "/body.txt.mustache", Array("x".utf8))
            var credentials: [String: String] = [:]
            for name in ["smtp-password", "database-url", "webhook-secret"] {
                let asFolder = dir(base + "/cred-folder-\(name)")
                _ = dir(asFolder + "/" + name)
                credentials["\(name) folder"] = asFolder
                let empty = dir(base + "/cred-empty-\(name)")
                _ = file(empty + "/" + name, [])
                credentials["\(name) empty"] = empty
                let binary = dir(base + "/cred-binary-\(name)")
                _ = file(binary + "/" + name, [0xFF, 0xFE, 0x00, 0xC3])
                credentials["\(name) not UTF-8"] = binary
            }
            return Fixtures(
                directory: base, notUTF8: file(base + "/not-utf8", [0xFF, 0xFE, 0x00, 0xC3, 0x28]),
                empty: file(base + "/empty", []), folder: dir(base + "/folder"), missing: base + "/missing/file",
                notPEM: file(base + "/not-pem.txt", Array("this is not a certificate\n".utf8)),
                templatesIncomplete: incomplete, templatesBroken: broken, credentials: credentials,
                webhookTemplateBroken: file(base + "/webhook-broken.mustache", Array(#"{"n": "{{#user_name}}"}"#.utf8)),
                webhookTemplateNotJSON: file(base + "/webhook-not-json.mustache", Array(#"{"n": {{user_name}}}"#.utf8)))
        }
    }

    /// The fixtures of this process.
    public static let fixtures = Fixtures.make()

    /// A typo of `key` as an operator might make it: the last letter doubled.
    public static func typo(_ key: String) -> String { key + String(key.last!) }

    /// Every case for the settings in `keys` (normally `ConfigurationLoader.knownKeys`): the value
    /// cases below, plus a typo of each key in the file.
    public static func all(keys: [String]) -> [BadSetting] {
        let f = fixtures
        var cases: [BadSetting] = [
            BadSetting("DATABASE_URL", .wrongType, ["DATABASE_URL": "postgresql://u@[::1/db"]),
            BadSetting("DATABASE_URL", .wrongType, ["DATABASE_URL": "host=localhost port=notaport"]),
            BadSetting("DATABASE_URL", .invalid, ["DATABASE_URL": "postgresql://u@localhost/db?nosuchoption=1"]),
        ]
        for path in [f.missing, f.folder, f.empty, f.notUTF8] {
            cases.append(BadSetting("DATABASE_URL_FILE", .unreadableFile, ["DATABASE_URL_FILE": path], unset: ["DATABASE_URL"]))
            cases.append(BadSetting("SMTP_PASSWORD_FILE", .unreadableFile, ["SMTP_PASSWORD_FILE": path], unset: ["SMTP_PASSWORD"]))
        }
        for name in ["smtp-password", "database-url"] {
            for what in ["folder", "empty", "not UTF-8"] {
                cases.append(BadSetting("credential \(name)", .unreadableFile, ["CREDENTIALS_DIRECTORY": f.credentials["\(name) \(what)"]!],
                                        unset: ["SMTP_PASSWORD", "SMTP_PASSWORD_FILE", "DATABASE_URL", "DATABASE_URL_FILE"]))
            }
        }
        cases += each("SMTP_HOST", .invalid, ["a b", "", "mail/example.com"])
        cases += each("SMTP_HOST", .wrongType, ["mail\nexample.com"])
        cases += each("SMTP_PORT", .wrongType, ["abc", "587.5", "0x24b", "587 x"])
        cases += each("SMTP_PORT", .outOfRange, ["0", "65536", "-25"])
        cases += each("SMTP_TLS", .invalid, ["maybe", "ssl", "true", ""])
        cases += each("SMTP_USER", .wrongType, ["user\nAUTH LOGIN"])
        cases += each("SMTP_USER", .wrongType, ["user\r\nAUTH LOGIN"])
        cases.append(BadSetting("SMTP_PASSWORD", .missing, ["SMTP_USER": "sileme"],
                                unset: ["SMTP_PASSWORD", "SMTP_PASSWORD_FILE", "CREDENTIALS_DIRECTORY"]))
        cases += each("SMTP_CA_FILE", .unreadableFile, [f.missing])
        cases += each("SMTP_CA_FILE", .wrongType, [f.folder, f.notPEM])
        cases += each("SMTP_TIMEOUT_SECONDS", .wrongType, ["abc", "1.5", "30s"])
        cases += each("SMTP_TIMEOUT_SECONDS", .outOfRange, ["0", "601", "-1"])
        cases += each("SMTP_RETRY_ATTEMPTS", .wrongType, ["three", "2.0"])
        cases += each("SMTP_RETRY_ATTEMPTS", .outOfRange, ["0", "21"])
        cases += each("SMTP_RETRY_BACKOFF_SECONDS", .wrongType, ["nan", "inf", "2s", "two"])
        cases += each("SMTP_RETRY_BACKOFF_SECONDS", .outOfRange, ["-1", "601"])
        cases += each("SMTP_CONNECTIONS", .wrongType, ["four", "4.5"])
        cases += each("SMTP_CONNECTIONS", .outOfRange, ["0", "65"])
        cases += each("SMTP_RATE_LIMIT", .wrongType, ["fast", "nan", "50/s"])
        cases += each("SMTP_RATE_LIMIT", .outOfRange, ["0", "0.001", "100001", "-5"])
        cases += each("SMTP_HELO_NAME", .invalid, ["mail host", "mail_host.example.com", "-mail.example.com", "mail..example.com",
                                                   "[300.1.2.3]", "[IPv6:zz::1]", "mail.example.com/x", "邮件.example.com"])
        cases += each("SMTP_HELO_NAME", .wrongType, ["mail.example.com\r\nRCPT TO:<x@y.z>"])
        cases += each("FROM_EMAIL", .invalid, ["not an address", "a@b@c", "noreply@", "\"q\"@sileme.app"])
        cases += each("FROM_EMAIL", .wrongType, ["noreply@sileme.app\nBcc: x@y.z"])
        cases.append(BadSetting("FROM_EMAIL", .missing, ["FROM_EMAIL": ""]))
        cases += each("FROM_NAME", .wrongType, ["Team\nBcc: x@y.z"])
        cases += each("FROM_NAME", .wrongType, ["Team\r\nBcc: x@y.z"])
        cases += each("APP_NAME", .wrongType, ["App\nX"])
        cases += each("APP_NAME", .wrongType, ["App\r\nX"])
        cases += each("NOTIFY_TIME", .wrongType, ["9am", "nine", "0900", "9.00"])
        cases += each("NOTIFY_TIME", .outOfRange, ["25:00", "24:00", "12:60", "12:00:60", "-1:00"])
        cases += each("NOTIFY_TIME_ZONE", .invalid, ["Mars/Olympus", "EST", "+08:00", "", "UTC+8", "Asia/Shang hai"])
        cases += each("MISS_THRESHOLD_DAYS", .wrongType, ["two", "2.5"])
        cases += each("MISS_THRESHOLD_DAYS", .outOfRange, ["0", "366", "-2"])
        cases += each("CATCH_UP_DAYS", .wrongType, ["seven", "7d"])
        cases += each("CATCH_UP_DAYS", .outOfRange, ["-1", "366"])
        cases += each("SUPERSEDE", .invalid, ["yes", "true", "1", "of", "on off"])
        cases += each("TEMPLATE_DIR", .unreadableFile, [f.missing, f.notPEM])
        cases += each("TEMPLATE_DIR", .invalid, [f.templatesIncomplete, f.templatesBroken])
        cases += each("MIGRATIONS_DIR", .unreadableFile, [f.missing, f.notPEM])
        cases += each("HEARTBEAT_URL", .invalid, ["ftp://example.com/ping", "example.com/ping", "http://a b/ping"])
        cases += each("RETRY_LATER_SECONDS", .wrongType, ["soon", "5m"])
        cases += each("RETRY_LATER_SECONDS", .outOfRange, ["0", "86401", "-300"])
        cases += each("INTAKE_DROP_RATIO", .wrongType, ["half", "50%"])
        cases += each("INTAKE_DROP_RATIO", .outOfRange, ["-0.1", "1.5", "50"])
        cases += each("INTAKE_MIN_USERS", .wrongType, ["many", "1.5"])
        cases += each("INTAKE_MIN_USERS", .outOfRange, ["0", "-5"])
        cases += each("HOLD_HOURS", .wrongType, ["six", "6h"])
        cases += each("HOLD_HOURS", .outOfRange, ["0", "-1", "721"])
        cases += each("DATABASE_RECONNECT_SECONDS", .wrongType, ["a minute", "60s"])
        cases += each("DATABASE_RECONNECT_SECONDS", .outOfRange, ["-1", "3601"])
        cases += each("DATABASE_READ_URL", .wrongType, ["postgresql://u@[::1/db", "host=localhost port=notaport"])
        cases += each("DATABASE_READ_URL", .invalid, ["postgresql://u@localhost/db?nosuchoption=1"])
        cases += each("DATABASE_READ_URL_FILE", .unreadableFile, [f.missing, f.folder, f.empty, f.notUTF8])
        cases += each("RETENTION_DAYS", .wrongType, ["ninety", "90d", "1.5"])
        cases += each("RETENTION_DAYS", .outOfRange, ["-1", "36501", "5", "10"])
        cases += each("METRICS_FILE", .invalid, ["relative/metrics.prom", "/", "/var/lib/node_exporter/"])
        cases += each("METRICS_FILE", .unreadableFile, [f.missing + "/metrics.prom"])
        cases += each("CLAIM_LEASE_SECONDS", .wrongType, ["two minutes", "120s", "nan"])
        cases += each("CLAIM_LEASE_SECONDS", .outOfRange, ["0", "1.5", "3601", "-120"])
        cases += each("DATABASE_LISTEN_URL", .wrongType, ["postgresql://u@[::1/db", "host=localhost port=notaport"])
        cases += each("DATABASE_LISTEN_URL", .invalid, ["postgresql://u@localhost/db?nosuchoption=1"])
        cases += each("DATABASE_LISTEN_URL_FILE", .unreadableFile, [f.missing, f.folder, f.empty, f.notUTF8])
        cases += each("DATABASE_SCHEMA", .invalid, ["public", "auth", "pg_catalog", "Sileme", "1sileme", "sileme; DROP SCHEMA public",
                                                   "a-b", "si\"leme", String(repeating: "s", count: 64), "工作"])
        cases += each("FOLLOW_UP_DAYS", .wrongType, ["two", "2d", "1.5"])
        cases += each("FOLLOW_UP_DAYS", .outOfRange, ["-1", "366"])
        cases += each("ESCALATE_AFTER", .wrongType, ["3", "three hours", "3 h", "1.5h", "-3h", "3hours", "h", "３h", "3w"])
        cases += each("ESCALATE_AFTER", .outOfRange, ["11d", "241h", "864001s", "99999999999999999d"])
        cases += each("DEFAULT_LANGUAGE", .invalid, ["klingon!", "e", "en-", "中文", "12", "zh--Hant"])
        cases += each("INTRODUCE_CONTACTS", .invalid, ["yes", "true", "1", "of"])
        cases += each("ALL_CLEAR_POLL_SECONDS", .wrongType, ["soon", "30s"])
        cases += each("ALL_CLEAR_POLL_SECONDS", .outOfRange, ["0", "0.5", "3601", "-30"])
        cases += each("WEBHOOK_URL", .invalid, ["ftp://hooks.example.com/x", "hooks.example.com/x", "https:///x", "https://a b/x",
                                                "https://hooks.example.com:70000/x"])
        cases += each("WEBHOOK_URL", .wrongType, ["https://hooks.example.com/x\nX-Evil: 1"])
        cases.append(BadSetting("WEBHOOK_SECRET", .missing, ["WEBHOOK_URL": "https://hooks.example.com/x"],
                                unset: ["WEBHOOK_SECRET", "WEBHOOK_SECRET_FILE", "CREDENTIALS_DIRECTORY"]))
        cases += each("WEBHOOK_SECRET", .invalid, ["not base64!", "whsec_c2hvcnQ=", "whsec_"], unset: ["WEBHOOK_SECRET_FILE"])
        for path in [f.missing, f.folder, f.empty, f.notUTF8, f.notPEM] {
            cases.append(BadSetting("WEBHOOK_SECRET_FILE", path == f.notPEM ? .invalid : .unreadableFile, ["WEBHOOK_SECRET_FILE": path],
                                    unset: ["WEBHOOK_SECRET"]))
        }
        for what in ["folder", "empty", "not UTF-8"] {
            cases.append(BadSetting("credential webhook-secret", .unreadableFile, ["CREDENTIALS_DIRECTORY": f.credentials["webhook-secret \(what)"]!],
                                    unset: ["WEBHOOK_SECRET", "WEBHOOK_SECRET_FILE", "SMTP_PASSWORD", "SMTP_PASSWORD_FILE",
                                            "DATABASE_URL", "DATABASE_URL_FILE"]))
        }
        cases += each("WEBHOOK_CA_FILE", .unreadableFile, [f.missing])
        cases += each("WEBHOOK_CA_FILE", .wrongType, [f.folder, f.notPEM])
        cases += each("WEBHOOK_TIMEOUT_SECONDS", .wrongType, ["ten", "1.5", "10s"])
        cases += each("WEBHOOK_TIMEOUT_SECONDS", .outOfRange, ["0", "301", "-1"])
        cases += each("WEBHOOK_EVENTS", .invalid, ["checkin.alarm", "ping", "alert", "checkin.alert,,checkin.reminder"])
        cases += each("WEBHOOK_BODY_TEMPLATE", .unreadableFile, [f.missing, f.folder, f.notUTF8])
        cases += each("WEBHOOK_BODY_TEMPLATE", .invalid, [f.webhookTemplateBroken, f.empty])
        // Tried for JSON where the channel is on.
        cases.append(BadSetting("WEBHOOK_BODY_TEMPLATE", .invalid, ["WEBHOOK_BODY_TEMPLATE": f.webhookTemplateNotJSON,
                                                                    "WEBHOOK_URL": "https://hooks.example.com/x",
                                                                    "WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]))
        cases += each("USER_REMINDER", .invalid, ["yes", "1", "on"])
        cases += each("MAIL_TRANSPORT", .invalid, ["sendmail", "smtps", "file"])
        cases.append(BadSetting("OUTBOX_DIR", .missing, ["MAIL_TRANSPORT": "outbox"], unset: ["OUTBOX_DIR"]))
        cases += each("OUTBOX_DIR", .unreadableFile, [f.missing, f.notPEM])
        // The acknowledgement page (docs/acknowledgement.md).
        cases += each("ACK_BASE_URL", .invalid, ["ftp://ack.example.com/a", "ack.example.com/a", "https://ack.example.com/a?x=1",
                                                 "https://ack.example.com/a#top"])
        cases += each("ACK_LISTEN", .invalid, ["8080", "localhost", "127.0.0.1:0", "127.0.0.1:70000", "[::1:8080", "a b:80"])
        cases += each("ACK_RATE_LIMIT", .wrongType, ["ten", "1.5"])
        cases += each("ACK_RATE_LIMIT", .outOfRange, ["0", "10000001", "-1"])
        cases += each("ACK_MAX_CONNECTIONS", .wrongType, ["many", "2.5"])
        cases += each("ACK_MAX_CONNECTIONS", .outOfRange, ["0", "1000001", "-5"])
        cases.append(BadSetting("ACK_SECRET", .missing, ["ACK_LISTEN": "127.0.0.1:8080"],
                                unset: ["ACK_SECRET", "ACK_SECRET_FILE", "CREDENTIALS_DIRECTORY"]))
        cases += each("ACK_SECRET", .invalid, ["short", String(repeating: "x", count: 31)], unset: ["ACK_SECRET_FILE"])
        for path in [f.missing, f.folder, f.empty, f.notUTF8] {
            cases.append(BadSetting("ACK_SECRET_FILE", .unreadableFile, ["ACK_SECRET_FILE": path], unset: ["ACK_SECRET"]))
        }
        // The bounces (docs/bounces.md): each case on top of a working bounce configuration.
        let bounce = ["BOUNCE_ADDRESS": "bounces@notify.example.com", "BOUNCE_SECRET": String(repeating: "b", count: 32),
                      "BOUNCE_MAILBOX": "maildir:/var/mail/bounces"]
        func bounceCase(_ key: String, _ kind: Kind, _ values: [String: String], unset: [String] = []) -> BadSetting {
            BadSetting(key, kind, bounce.merging(values) { $1 }.filter { !unset.contains($0.key) }, unset: unset)
        }
        for address in ["not-an-address", "bounces+x@notify.example.com", "bounces@"] {
            cases.append(bounceCase("BOUNCE_ADDRESS", .invalid, ["BOUNCE_ADDRESS": address]))
        }
        for mailbox in ["maildir:relative/path", "/var/mail/bounces", "https://mail.example.com/INBOX", "imaps://mail.example.com/INBOX",
                        "imaps://u:Mailbox-Pw-4711@mail.example.com/INBOX", "imap://u@mail.example.com/INBOX", "pop3://u@192.0.2.1",
                        "pop3s://u@mail.example.com/INBOX", "imaps://u@mail.example.com/INBOX?x=1", "imaps://u@mail.example.com:70000/INBOX"] {
            cases.append(bounceCase("BOUNCE_MAILBOX", .invalid, ["BOUNCE_MAILBOX": mailbox, "BOUNCE_PASSWORD": "pw"]))
        }
        cases.append(bounceCase("BOUNCE_MAILBOX", .missing, [:], unset: ["BOUNCE_MAILBOX"]))
        cases.append(BadSetting("BOUNCE_MAILBOX", .invalid, ["BOUNCE_MAILBOX": "maildir:/var/mail/bounces"], unset: ["BOUNCE_ADDRESS"]))
        for poll in ["soon", "1.5"] { cases.append(bounceCase("BOUNCE_POLL_SECONDS", .wrongType, ["BOUNCE_POLL_SECONDS": poll])) }
        for poll in ["0", "4", "86401", "-60"] { cases.append(bounceCase("BOUNCE_POLL_SECONDS", .outOfRange, ["BOUNCE_POLL_SECONDS": poll])) }
        cases.append(bounceCase("BOUNCE_SECRET", .missing, [:], unset: ["BOUNCE_SECRET", "BOUNCE_SECRET_FILE", "CREDENTIALS_DIRECTORY"]))
        for short in ["short", String(repeating: "x", count: 31)] {
            cases.append(bounceCase("BOUNCE_SECRET", .invalid, ["BOUNCE_SECRET": short], unset: ["BOUNCE_SECRET_FILE"]))
        }
        cases.append(bounceCase("BOUNCE_PASSWORD", .invalid, ["BOUNCE_PASSWORD": "a-password-a-maildir-has-no-use-for"]))
        cases.append(bounceCase("BOUNCE_PASSWORD_FILE", .missing, ["BOUNCE_MAILBOX": "imaps://bounces@mail.example.com/INBOX"],
                                unset: ["BOUNCE_PASSWORD", "BOUNCE_PASSWORD_FILE", "CREDENTIALS_DIRECTORY"]))
        for path in [f.missing, f.folder, f.empty, f.notUTF8] {
            cases.append(bounceCase("BOUNCE_SECRET_FILE", .unreadableFile, ["BOUNCE_SECRET_FILE": path], unset: ["BOUNCE_SECRET"]))
            cases.append(bounceCase("BOUNCE_PASSWORD_FILE", .unreadableFile,
                                    ["BOUNCE_PASSWORD_FILE": path, "BOUNCE_MAILBOX": "pop3s://bounces@mail.example.com"], unset: ["BOUNCE_PASSWORD"]))
        }
        let imap = ["BOUNCE_MAILBOX": "imaps://bounces@mail.example.com/INBOX", "BOUNCE_PASSWORD": "pw"]
        cases.append(bounceCase("BOUNCE_CA_FILE", .unreadableFile, imap.merging(["BOUNCE_CA_FILE": f.missing]) { $1 }))
        for path in [f.folder, f.notPEM] {
            cases.append(bounceCase("BOUNCE_CA_FILE", .wrongType, imap.merging(["BOUNCE_CA_FILE": path]) { $1 }))
        }
        cases.append(bounceCase("BOUNCE_CA_FILE", .invalid, ["BOUNCE_CA_FILE": "/etc/ssl/certs/ca-certificates.crt"]))
        // Fallback relays (docs/delivery.md, "Fallback relays").
        for relay in ["relay.example", "http://relay.example", "smtp://user:pw@relay.example", "smtp://relay.example/path",
                      "smtps://relay.example?tls=none", "smtp://relay.example?verify=no", "smtp://a smtp://b smtp://c smtp://d smtp://e"] {
            cases.append(BadSetting("SMTP_FALLBACK", .invalid, ["SMTP_FALLBACK": relay]))
        }
        cases += each("SMTP_FALLBACK_RETRY", .wrongType, ["5", "five minutes", "1.5m"])
        cases += each("SMTP_FALLBACK_RETRY", .outOfRange, ["0s", "2d", "86401s"])
        for number in 1...4 {
            cases.append(BadSetting("SMTP_FALLBACK_PASSWORD_\(number)", .invalid, ["SMTP_FALLBACK_PASSWORD_\(number)": "pw"]))
            cases.append(BadSetting("SMTP_FALLBACK_PASSWORD_\(number)_FILE", .invalid, ["SMTP_FALLBACK_PASSWORD_\(number)_FILE": f.missing]))
        }
        cases.append(BadSetting("SMTP_FALLBACK_PASSWORD_1", .missing, ["SMTP_FALLBACK": "smtp://user@relay.example"]))
        for path in [f.missing, f.folder, f.empty, f.notUTF8] {
            cases.append(BadSetting("SMTP_FALLBACK_PASSWORD_1_FILE", .unreadableFile,
                                    ["SMTP_FALLBACK": "smtp://user@relay.example", "SMTP_FALLBACK_PASSWORD_1_FILE": path]))
        }
        // The canary (docs/operating.md, "The canary"): each case on top of a working bounce configuration.
        let canary = ["CANARY_EVERY": "6h", "CANARY_ADDRESS": "bounces+canary@notify.example.com"]
        func canaryCase(_ key: String, _ kind: Kind, _ values: [String: String], unset: [String] = []) -> BadSetting {
            bounceCase(key, kind, canary.merging(values) { $1 }.filter { !unset.contains($0.key) }, unset: unset)
        }
        for every in ["6", "six hours", "1.5h"] { cases.append(canaryCase("CANARY_EVERY", .wrongType, ["CANARY_EVERY": every])) }
        for every in ["1s", "4s", "8d"] { cases.append(canaryCase("CANARY_EVERY", .outOfRange, ["CANARY_EVERY": every])) }
        for within in ["15", "soon"] { cases.append(canaryCase("CANARY_WITHIN", .wrongType, ["CANARY_WITHIN": within])) }
        for within in ["0", "4s", "2d"] { cases.append(canaryCase("CANARY_WITHIN", .outOfRange, ["CANARY_WITHIN": within])) }
        for address in ["not-an-address", "canary@"] { cases.append(canaryCase("CANARY_ADDRESS", .invalid, ["CANARY_ADDRESS": address])) }
        cases.append(canaryCase("CANARY_ADDRESS", .missing, [:], unset: ["CANARY_ADDRESS"]))
        cases.append(BadSetting("CANARY_ADDRESS", .invalid, ["CANARY_ADDRESS": "canary@notify.example.com"]))
        cases.append(BadSetting("CANARY_WITHIN", .invalid, ["CANARY_EVERY": "0", "CANARY_WITHIN": "15m"]))
        cases.append(BadSetting("CANARY_EVERY", .missing, canary, unset: ["BOUNCE_ADDRESS"]))
        cases.append(canaryCase("CANARY_EVERY", .invalid, ["MAIL_TRANSPORT": "outbox", "OUTBOX_DIR": "/tmp"]))
        for key in keys { cases.append(BadSetting(typo(key), .unknownKey, [typo(key): "1"])) }
        cases.append(BadSetting("smtp_port", .unknownKey, ["smtp_port": "25"]))
        return cases
    }

    /// The configuration file text that gives `values` (`KEY=VALUE` lines).
    public static func fileText(_ values: [String: String]) -> String {
        values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined()
    }
}
