import Foundation
import Testing
import TestSupport
@testable import Values

/// docs/interfaces.md "secrets never appear in logs or error messages" (issue 6): with a recognisable SMTP
/// password and a database URL holding a recognisable password, every command and mode runs —
/// `--help` everywhere, `check`, `migrate`, `--run-now` succeeding and failing (AUTH rejected,
/// database unreachable, bad configuration), the dry run and `report` in every format, `retry`,
/// `--preview`, secrets from files and credentials, the daemon — and its standard output, standard
/// error and journal entries are searched for the secrets in every form they could take (as
/// given, percent-encoded, base64 as in SMTP AUTH, and the random token at their heart). The
/// mails and the database are searched too. Each run's exit status is checked, so the test cannot
/// pass by running nothing.
@Suite("Secrets on real servers", .enabled(if: TestEnvironment.enabled))
struct SecretsIntegrationTests {
    /// One place a secret could show up.
    struct Output {
        let name: String
        let text: String
    }

    /// A secret and the forms it could leak in.
    struct Secret {
        let name: String
        let forms: [String]

        /// `value`, its percent-encoding, base64 alone and inside an AUTH PLAIN string for `user`,
        /// and `token` (random, part of `value`).
        init(_ name: String, value: String, token: String, user: String? = nil) {
            self.name = name
            var forms = [value, token, Data(value.utf8).base64EncodedString(),
                         value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!]
            if let user { forms.append(Data("\0\(user)\0\(value)".utf8).base64EncodedString()) }
            self.forms = forms
        }
    }

    /// Runs each of `runs` — (arguments, environment, expected exit status, what standard output
    /// or error must show) — and checks both; the outputs to search, and each run's result.
    static func run(_ runs: [([String], [String: String], Int32, String)]) throws
        -> (outputs: [Output], results: [(name: String, result: NotifierProcess.Result, status: Int32)]) {
        var outputs: [Output] = []
        var results: [(name: String, result: NotifierProcess.Result, status: Int32)] = []
        for (arguments, env, status, shows) in runs {
            let name = arguments.joined(separator: " ")
            let result = try NotifierProcess.run(arguments, environment: env)
            #expect(result.status == status, "\(name): exit \(result.status), stderr \(result.stderr.suffix(400))")
            #expect(result.stdout.contains(shows) || result.stderr.contains(shows), "\(name) shows \(shows)")
            outputs += [Output(name: "\(name): stdout", text: result.stdout), Output(name: "\(name): stderr", text: result.stderr)]
            results.append((name, result, status))
        }
        return (outputs, results)
    }

    /// Journal entries as one text, a `FIELD=value` line each.
    static func text(_ entries: [[String: String]]) -> String {
        entries.map { $0.map { "\($0.key)=\($0.value)" }.joined(separator: "\n") }.joined(separator: "\n")
    }

    /// What the notifier stored and sent: the database dump and every delivered mail.
    static func stored(_ db: TestDatabase, _ mail: Mailbox) throws -> [Output] {
        [Output(name: "database dump", text: try db.dump())]
            + (try mail.deliveries()).map { Output(name: "mail to \($0.recipient)", text: String(decoding: $0.raw, as: UTF8.self)) }
    }

    /// Expects no form of any of `secrets` in any of `outputs`; the number of checks made.
    static func expectNoLeaks(_ outputs: [Output], _ secrets: [Secret]) -> Int {
        var checks = 0
        for output in outputs {
            for secret in secrets {
                for form in secret.forms {
                    checks += 1
                    #expect(!output.text.contains(form), "\(secret.name) (\(DebugText.literal(form, limit: 40))) in \(output.name)")
                }
            }
        }
        return checks
    }

    static func token() -> String { String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16)).lowercased() }

    @Test("no command or mode shows the SMTP or database password: stdout, stderr, journal, mails, database")
    func noSecretAnywhere() throws {
        let environment = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let dbToken = Self.token(), badToken = Self.token()
        let dbPassword = "Db/Pa55:w\(dbToken)@#?ö"
        let badPassword = "Sm7p/Wr0ng:\(badToken)@ö"
        let secrets = [
            Secret("database password", value: dbPassword, token: dbToken),
            Secret("SMTP password", value: environment.smtpPassword, token: environment.smtpPassword, user: environment.smtpUser),
            Secret("rejected SMTP password", value: badPassword, token: badToken, user: environment.smtpUser),
        ]
        let encoded = dbPassword.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let url = "postgresql://postgres:\(encoded)@127.0.0.1:\(environment.pgPort)/\(db.name)"
        let base = try NotifierProcess.environment(database: db, ["DATABASE_URL": url])
        func with(_ changes: [String: String?]) -> [String: String] {
            var values = base
            for (key, value) in changes { values[key] = value }
            return values
        }
        let due = try db.addUser(name: "张三", email: mail.address("zhang"), checkIns: ["2026-01-10"])
        try db.addUser(name: "Bad", email: "not-an-address", checkIns: ["2026-01-10"])
        let failing = try db.addUser(name: "Fails", email: mail.address("perm550"), checkIns: ["2026-01-10"])
        try db.addUser(name: "AUTH", email: mail.address("auth"), checkIns: ["2026-01-17"])  // due on 2026-01-20

        // Secrets from a file and from systemd credentials as well.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "\(environment.smtpPassword)\n".write(to: folder.appendingPathComponent("smtp-password"), atomically: true, encoding: .utf8)
        try "\(url)\n".write(to: folder.appendingPathComponent("database-url"), atomically: true, encoding: .utf8)
        let fromCredentials = with(["SMTP_PASSWORD": nil, "DATABASE_URL": nil, "CREDENTIALS_DIRECTORY": folder.path])
        let fromFiles = with(["SMTP_PASSWORD": nil, "DATABASE_URL": nil,
                              "SMTP_PASSWORD_FILE": folder.appendingPathComponent("smtp-password").path,
                              "DATABASE_URL_FILE": folder.appendingPathComponent("database-url").path])
        let configFile = folder.appendingPathComponent("notifier.conf").path
        try "DATABASE_URL=\(url)\nSMTP_PASSWORD=\(environment.smtpPassword)\nSMTP_PORT=not-a-port\n"
            .write(toFile: configFile, atomically: true, encoding: .utf8)

        // (arguments, environment, expected exit status, what stdout or stderr must show)
        let d = ["--date", "2026-01-13"]
        let runs: [([String], [String: String], Int32, String)] = [
            (["--help"], base, 0, "USAGE"), (["help"], base, 0, "USAGE"), (["run", "--help"], base, 0, "--run-now"),
            (["migrate", "--help"], base, 0, "USAGE"), (["check", "--help"], base, 0, "USAGE"),
            (["report", "--help"], base, 0, "--format"), (["retry", "--help"], base, 0, "--dry-run"),
            (["help", "report"], base, 0, "USAGE"),
            (["migrate"], base, 0, "schema is current"),
            (["check"], base, 0, "ok   mail server"),
            (["check"], with(["SMTP_PASSWORD": badPassword]), 69, "FAIL mail server"),
            (["check"], fromCredentials, 0, "ok   mail server"),
            (["check"], fromFiles, 0, "ok   mail server"),
            (["--run-now", "--dry-run"] + d, base, 0, "DECISION"),
            (["--run-now", "--dry-run", "--format", "json"] + d, base, 0, "\"decision\""),
            (["--run-now", "--dry-run", "--format", "csv", "--full-emails"] + d, base, 0, mail.address("zhang")),
            (["--run-now", "--dry-run", "--format", "json"] + d, fromCredentials, 0, "\"decision\""),
            (["--run-now", "--dry-run", "--preview", due] + d, base, 0, "Subject:"),
            (["--run-now"] + d, with(["DATABASE_URL": "postgresql://postgres:\(encoded)@127.0.0.1:1/\(db.name)"]), 69, "database unreachable"),
            (["--run-now"] + d, with(["SMTP_PORT": "not-a-port"]), 78, "SMTP_PORT"),
            (["--run-now", "--config", configFile] + d, with(["SMTP_PASSWORD": nil, "DATABASE_URL": nil, "SMTP_PORT": nil]), 78, "SMTP_PORT"),
            (["--run-now"] + d, base, 75, "run finished for 2026-01-13: 1 sent, 1 failed, 1 skipped"),
            (["--run-now", "--date", "2026-01-20"], with(["SMTP_PASSWORD": badPassword, "SMTP_RETRY_ATTEMPTS": "1"]), 69, "run finished for 2026-01-20: 0 sent"),
            (["retry", "--dry-run"] + d, base, 0, "would be sent again"),
            (["retry", "--dry-run", "--json"] + d, base, 0, "\"retry\""),
            (["retry"] + d, base, 75, "run finished"),
            (["report", "--from", "2026-01-10", "--to", "2026-01-13"], base, 0, "Totals"),
            (["report", "--from", "2026-01-10", "--to", "2026-01-13", "--format", "json"], base, 0, "\"summary\""),
            (["report", "--from", "2026-01-10", "--to", "2026-01-13", "--format", "csv", "--full-emails"], base, 0, "notification"),
            (["report", "--from", "2026-01-10", "--to", "2026-01-13", "--format", "html"], base, 0, "<svg"),
            (["report", "--from", "2026-01-10", "--to", "2026-01-13", "--user", failing, "--format", "json"], base, 0, "\"streaks\""),
            (["report", "--from", "2026-01-10", "--to", "2026-01-13"], with(["DATABASE_URL": "postgresql://postgres:\(encoded)@127.0.0.1:1/x"]), 69, "unreachable"),
        ]
        let ran = try Self.run(runs)
        var outputs = ran.outputs
        var pids = ran.results.map { (name: $0.name, pid: $0.result.pid, status: $0.status) }

        // The daemon: NOTIFY_TIME has passed today, so it catches today's run up at start (a user is
        // due today), then waits (STATUS=waiting) and stops on SIGTERM.
        let today = CalendarDate(Date(), in: TimeZone(identifier: "Asia/Shanghai")!)
        try db.addUser(name: "今天", email: mail.address("today"), checkIns: [today.adding(days: -3).description])
        let notify = try NotifySocket()
        defer { notify.shutdown() }
        let (daemon, out, err) = try NotifierProcess.start([], environment: with(["NOTIFY_TIME": "00:00:01", "NOTIFY_SOCKET": notify.path]))
        let waiting = notify.waitFor(60) { $0.contains("STATUS=waiting") }
        kill(daemon.processIdentifier, SIGTERM)
        let stopped = NotifierProcess.finish(daemon, out, err)
        #expect(waiting != nil && stopped.status == 0, "the daemon ran and stopped: \(stopped.stderr.suffix(400))")
        outputs += [Output(name: "daemon: stdout", text: stopped.stdout), Output(name: "daemon: stderr", text: stopped.stderr),
                    Output(name: "daemon: sd_notify", text: notify.messages.map(\.text).joined(separator: "\n"))]
        pids.append(("daemon", stopped.pid, 0))

        // The journal entries of every run (journald is caught up: the last runs' entries are there).
        if environment.journal {
            _ = try JournalReader.entries(pid: stopped.pid, minimum: 2)
            for (name, pid, status) in pids {
                let entries = try JournalReader.entries(pid: pid, minimum: 0, timeout: 0)
                if status == 75 || name == "daemon" {  // the runs that sent (or tried to send) mail
                    #expect(entries.count >= 2, "\(name) wrote its events to the journal")
                }
                outputs.append(Output(name: "\(name): journal", text: Self.text(entries)))
            }
        }
        // What the notifier stored and sent.
        outputs += try Self.stored(db, mail)
        #expect(Set(try mail.deliveries().map(\.recipient)) == [mail.address("zhang"), mail.address("today")], "mails were sent")

        let checks = Self.expectNoLeaks(outputs, secrets)
        print("Secrets: \(runs.count + 1) runs, \(outputs.count) outputs grepped for \(secrets.count) secrets in "
              + "\(secrets.map(\.forms.count).reduce(0, +)) forms (\(checks) checks)")
    }

    @Test("the webhook secret and the key in WEBHOOK_URL: never shown by any command or refusal, given directly, as a file or a credential")
    func webhookSecret() throws {
        let environment = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let token = Self.token(), urlToken = Self.token(), userToken = Self.token()
        let key = Data("\(token)\(token)".utf8).base64EncodedString()  // 32 bytes
        let webhookSecret = "whsec_" + key
        // A real receiver (the events are sent), its URL holding a password and a bot's key.
        let receiver = try WebhookReceiver(secret: webhookSecret)
        let tlsURL = try #require(receiver.tlsURL)
        let url = tlsURL.replacingOccurrences(of: "https://", with: "https://bot:pw\(userToken)@") + "?key=\(urlToken)"
        let secrets = [
            Secret("webhook secret", value: webhookSecret, token: token),
            Secret("webhook key", value: key, token: String(key.prefix(24))),
            Secret("key in WEBHOOK_URL", value: url, token: urlToken),
            Secret("password in WEBHOOK_URL", value: "pw\(userToken)", token: userToken),
        ]
        let base = try NotifierProcess.environment(database: db, ["WEBHOOK_URL": url, "WEBHOOK_SECRET": webhookSecret,
                                                                  "WEBHOOK_CA_FILE": environment.caFile])
        func with(_ changes: [String: String?]) -> [String: String] {
            var values = base
            for (key, value) in changes { values[key] = value }
            return values
        }
        try db.addUser(name: "张三", email: mail.address("webhook-zhang"), checkIns: ["2026-01-10"])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "\(webhookSecret)\n".write(to: folder.appendingPathComponent("webhook-secret"), atomically: true, encoding: .utf8)
        let notJSON = folder.appendingPathComponent("body.mustache").path
        try #"{"name": {{user_name}}, "key": "\#(urlToken)"}"#.write(toFile: notJSON, atomically: true, encoding: .utf8)
        let broken = folder.appendingPathComponent("broken.mustache").path
        try #"{"key": "\#(urlToken)", "name": "{{#user_name}}"}"#.write(toFile: broken, atomically: true, encoding: .utf8)
        let configFile = folder.appendingPathComponent("notifier.conf").path
        try "WEBHOOK_URL=\(url)\nWEBHOOK_SECRET=\(webhookSecret)\nWEBHOOK_TIMEOUT_SECONDS=soon\n"
            .write(toFile: configFile, atomically: true, encoding: .utf8)
        let fromCredential = with(["WEBHOOK_SECRET": nil, "CREDENTIALS_DIRECTORY": folder.path])
        let fromFile = with(["WEBHOOK_SECRET": nil, "WEBHOOK_SECRET_FILE": folder.appendingPathComponent("webhook-secret").path])
        let d = ["--date", "2026-01-13"]
        // (arguments, environment, expected exit status, what stdout or stderr must show)
        let runs: [([String], [String: String], Int32, String)] = [
            (["migrate"], base, 0, "schema is current"),
            (["check"], base, 0, "ok   mail server"),
            (["check"], fromCredential, 0, "ok   mail server"),
            (["--run-now", "--dry-run", "--format", "json"] + d, fromFile, 0, "\"decision\""),
            (["--run-now"] + d, base, 0, "webhook events: 1 delivered, 0 failed"),
            (["report", "--from", "2026-01-10", "--to", "2026-01-13"], base, 0, "Totals"),
            (["retry", "--dry-run"] + d, base, 0, "would be sent again"),
            (["check"], with(["WEBHOOK_SECRET": "whsec_\(token)!"]), 78, "WEBHOOK_SECRET"),
            (["check"], with(["WEBHOOK_SECRET": "whsec_" + Data(token.utf8).base64EncodedString()]), 78, "WEBHOOK_SECRET"),
            (["--run-now"] + d, with(["WEBHOOK_SECRET": nil, "WEBHOOK_SECRET_FILE": folder.path]), 78, "WEBHOOK_SECRET_FILE"),
            (["--run-now"] + d, with(["WEBHOOK_URL": url.replacingOccurrences(of: "https:", with: "ftp:")]), 78, "WEBHOOK_URL"),
            (["--run-now"] + d, with(["WEBHOOK_URL": url + " x"]), 78, "WEBHOOK_URL"),
            (["--run-now"] + d, with(["WEBHOOK_URL": url + "\nX: 1"]), 78, "WEBHOOK_URL"),
            (["--run-now"] + d, with(["WEBHOOK_SECRET": nil]), 78, "WEBHOOK_SECRET"),
            (["--run-now"] + d, with(["WEBHOOK_BODY_TEMPLATE": notJSON]), 78, "WEBHOOK_BODY_TEMPLATE"),
            (["--run-now"] + d, with(["WEBHOOK_BODY_TEMPLATE": broken]), 78, "WEBHOOK_BODY_TEMPLATE"),
            (["--run-now"] + d, with(["USER_REMINDER": "on", "WEBHOOK_EVENTS": "checkin.alert"]), 78, "USER_REMINDER"),
            ([], with(["WEBHOOK_EVENTS": "checkin.alarm"]), 78, "WEBHOOK_EVENTS"),
            (["--run-now", "--config", configFile] + d, with(["WEBHOOK_URL": nil, "WEBHOOK_SECRET": nil]), 78, "WEBHOOK_TIMEOUT_SECONDS"),
        ]
        let ran = try Self.run(runs)
        var outputs = ran.outputs
        // The journal of the run that sent a mail.
        if environment.journal, let sent = ran.results.first(where: { $0.name == (["--run-now"] + d).joined(separator: " ") }) {
            outputs.append(Output(name: "\(sent.name): journal", text: Self.text(try JournalReader.entries(of: sent.result, minimum: 2))))
        }
        outputs += try Self.stored(db, mail)
        #expect(try mail.deliveries().count == 1, "the mail was sent")
        #expect(try receiver.received().filter { $0.delivered && $0.verified }.count == 3, "two signed pings and the alert's event")
        let checks = Self.expectNoLeaks(outputs, secrets)
        print("Webhook secrets: \(runs.count) runs, \(outputs.count) outputs grepped for \(secrets.count) secrets (\(checks) checks)")
    }

    @Test("a malformed DATABASE_URL with a password: refused without quoting it")
    func malformedURL() throws {
        let db = try TestDatabase()
        let token = Self.token()
        for url in ["postgresql://postgres:pw\(token)@[::1/db", "postgresql://postgres:pw%zz\(token)@127.0.0.1/db"] {
            let result = try NotifierProcess.run(["--run-now"], environment: try NotifierProcess.environment(database: db, ["DATABASE_URL": url]))
            #expect(result.status != 0)
            #expect(result.status == 78 && result.stderr.contains("DATABASE_URL"), "refused at start, naming the setting")
            #expect(!result.stderr.contains(token), "the password in \(DebugText.literal(result.stderr, limit: 300))")
        }
    }
}
