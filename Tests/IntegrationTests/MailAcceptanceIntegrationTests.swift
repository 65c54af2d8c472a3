import Config
import Foundation
import Mail
import Rule
import Testing
import Values

/// Every kind of mail, in every shipped language, as a careful receiving side meets it: sent over
/// STARTTLS to a real Postfix that applies strict checks (`Postfix.strictChecks`), relayed by it,
/// and scored by SpamAssassin with its local rules. A mail a strict relay refuses or warns about,
/// or one a filter takes for spam, is a family that is not told.
@Suite("Every mail through a strict Postfix and SpamAssassin", .enabled(if: TestEnvironment.enabled))
struct MailAcceptanceIntegrationTests {
    /// The most points SpamAssassin may give one of our mails with its local rules. A filter marks
    /// spam at 5.0 by default, and at a real recipient the rules this machine cannot run add to
    /// what is counted here (blocklists and URI lookups, SPF and DKIM of the operator's domain, a
    /// Bayes database trained on other people's mail: BAYES_99 alone is 3.5). A mail that already
    /// scores 1.0 locally has given a fifth of that margin away for nothing; ours scored 0.0.
    static let ceiling = 1.0
    /// The shipped languages.
    static let languages = ["zh-Hans", "zh-Hant", "en"]
    /// The acknowledgement page's address in the links, as an operator's public HTTPS name (a link
    /// to a bare IP address is a spam sign of its own, and not one a real service sends).
    static let ackBase = "https://care.sileme.app/ack"
    static let ackSecret = "test-ack-secret-0123456789abcdef0123456789"

    /// A strict relay for `mail`'s domain, offering STARTTLS with the test servers' certificate and
    /// relaying to the plain test server.
    static func relay(_ mail: Mailbox) throws -> Postfix {
        let env = try TestEnvironment.require()
        let key = ((env.caFile as NSString).deletingLastPathComponent as NSString).appendingPathComponent("key.pem")
        return try Postfix(relaying: [mail.domain], to: env.plainPort, strictTLS: .init(certificate: env.caFile, key: key))
    }

    /// The messages `mail` holds from `first` on, once there are `count` more.
    static func arrived(_ mail: Mailbox, from first: Int, count: Int, _ relay: Postfix) throws -> [Mailbox.Delivery] {
        let done = try DaemonIntegrationTests.eventually(30) { try mail.deliveries().count >= first + count }
        let deliveries = try mail.deliveries()
        #expect(done, "\(deliveries.count - first) of \(count) relayed: \(relay.log.suffix(3000))")
        return Array(deliveries.dropFirst(first))
    }

    /// Checks every message relayed for `mail`: Postfix took each over TLS and relayed it
    /// (`status=sent`), and said nothing against any (`reject`, `warning`); each parses without a
    /// defect in Python's `email`, has an ASCII header, and SpamAssassin scores it under `ceiling`.
    /// Prints each one's score, named by `label`.
    static func accepted(_ deliveries: [(label: String, delivery: Mailbox.Delivery)], relay: Postfix, mail: Mailbox) throws {
        let log = relay.log
        let lines = log.split(separator: "\n")
        let sent = lines.filter { $0.contains("@\(mail.domain)>") && $0.contains(" status=sent ") }
        #expect(sent.count == deliveries.count, "\(log)")
        let complaints = lines.filter { $0.contains("reject") || $0.contains("warning") || $0.contains("status=deferred") }
        #expect(complaints.isEmpty, "\(complaints.joined(separator: "\n"))")
        for (label, delivery) in deliveries {
            let parsed = try MailParser.parse(delivery.raw)
            #expect(parsed.defects.isEmpty, "\(label): \(parsed.defects)")
            let head = String(decoding: delivery.raw, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
            #expect(head.unicodeScalars.allSatisfy { $0.isASCII }, "\(label): a raw header is not ASCII")
            #expect(head.contains("(using TLS"), "\(label): the relay's Received line names TLS")
            let score = try SpamAssassin.score(delivery.raw)
            print("spamassassin \(label): \(score)")
            #expect(score.points <= ceiling, "\(label): \(score)")
        }
    }

    @Test("the notifier's own runs (introduction, alert with its link, follow-up, all-clear) to contacts in zh-Hans, zh-Hant and en: each taken over STARTTLS by a strict Postfix and relayed, nothing rejected or warned about, SpamAssassin ≤ 1.0")
    func realRuns() throws {
        try #require(Postfix.isAvailable, "postfix is not installed (scripts/install-deps.sh)")
        try #require(SpamAssassin.isAvailable, "spamassassin is not installed (scripts/install-deps.sh)")
        let db = try TestDatabase()
        let mail = try Mailbox()
        let relay = try Self.relay(mail)
        defer { relay.stop() }
        let contacts = Self.languages.map { mail.address("contact.\($0.lowercased())") }
        // The design's one address is the first contact's too: the contacts' rows are what is served.
        let user = try db.addUser(name: "王秀英", email: contacts[0], checkIns: ["2026-01-10"])
        try db.query("""
            INSERT INTO emergency_contacts (user_id, email, position, language)
            VALUES ($1, $2, 1, NULL), ($1, $3, 2, 'zh-Hant'), ($1, $4, 3, 'en')
            """, [user] + contacts)
        let env = try NotifierProcess.environment(database: db, [
            "SMTP_HOST": "localhost", "SMTP_PORT": "\(relay.port)", "SMTP_TLS": "starttls", "SMTP_USER": nil, "SMTP_PASSWORD": nil,
            "INTRODUCE_CONTACTS": "on", "FOLLOW_UP_DAYS": "1", "ACK_BASE_URL": Self.ackBase, "ACK_SECRET": Self.ackSecret,
        ])
        var relayed: [(label: String, delivery: Mailbox.Delivery)] = []
        // Each run sends one kind to the three contacts; their sent rows say which.
        func run(_ date: String, _ kind: DeliveryJob.Kind) throws {
            let result = try NotifierProcess.run(["--run-now", "--date", date], environment: env)
            #expect(result.status == 0, "\(kind): \(result.stderr.suffix(1500))")
            for delivery in try Self.arrived(mail, from: relayed.count, count: contacts.count, relay) {
                let index = try #require(contacts.firstIndex(of: delivery.recipient), "\(delivery.recipient)")
                relayed.append(("\(kind.rawValue) \(Self.languages[index])", delivery))
            }
            let rows = try db.query("""
                SELECT count(*)::text FROM notification_logs WHERE user_id = $1 AND channel = 'email' AND status = 'sent' AND kind = $2
                """, [user, kind.rawValue])
            #expect(rows == [["\(contacts.count)"]], "\(kind): \(rows)")
        }
        try run("2026-01-11", .introduction)  // named, not yet due
        try run("2026-01-13", .alert)
        try run("2026-01-14", .followUp)
        try db.checkIn(user, "2026-01-15")
        try run("2026-01-15", .allClear)
        #expect(relayed.count == 12)
        try Self.accepted(relayed, relay: relay, mail: mail)
    }

    @Test("every kind of mail (and the alert after a pause, and with the example HTML) in zh-Hans, zh-Hant and en, composed as a run composes it and sent by the notifier's SMTP client: each taken over STARTTLS by a strict Postfix and relayed, nothing rejected or warned about, SpamAssassin ≤ 1.0")
    func everyKind() throws {
        try #require(Postfix.isAvailable, "postfix is not installed (scripts/install-deps.sh)")
        try #require(SpamAssassin.isAvailable, "spamassassin is not installed (scripts/install-deps.sh)")
        let env = try TestEnvironment.require()
        let mail = try Mailbox()
        let relay = try Self.relay(mail)
        defer { relay.stop() }
        // The same settings, composer and transport a run builds (the built-in templates are the
        // files of config/templates), so the bytes handed to the relay are a run's bytes.
        let configuration = try ConfigurationLoader(environment: [
            "FROM_EMAIL": "noreply@sileme.app", "SMTP_HOST": "localhost", "SMTP_PORT": "\(relay.port)", "SMTP_TLS": "starttls",
            "SMTP_CA_FILE": env.caFile, "SMTP_TIMEOUT_SECONDS": "10", "ACK_BASE_URL": Self.ackBase, "ACK_SECRET": Self.ackSecret,
        ], filePath: nil).load()
        let composer = try MailComposer(sending: configuration.mail)
        let transport = try configuration.mail.makeMailTransport()
        // The HTML alternative the operator is offered (config/templates/body.html.mustache.example),
        // as docs/mail.md says to use it: copied to body.html.mustache beside the shipped text.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sn-html-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let shipped = TestEnvironment.root.appendingPathComponent("config/templates")
        try FileManager.default.copyItem(at: shipped.appendingPathComponent("zh-Hans"), to: folder.appendingPathComponent("zh-Hans"))
        try FileManager.default.copyItem(at: shipped.appendingPathComponent("body.html.mustache.example"),
                                         to: folder.appendingPathComponent("zh-Hans/body.html.mustache"))
        let html = try MailComposer(configuration.mail, templates: MailTemplates(directory: folder.path))
        var messages = try Self.jobs(mail).map { (label: $0.label, job: $0.job, composer: composer) }
        let first = try #require(messages.first { $0.job.kind == .alert })
        messages.append(("alert with the example HTML zh-Hans", first.job, html))
        var relayed: [(label: String, delivery: Mailbox.Delivery)] = []
        for (label, job, composer) in messages {
            #expect(composer.language(of: job).tag.identifier == label.split(separator: " ").last.map(String.init), "\(label)")
            let runDate = job.kind == .alert || job.kind == .introduction ? Self.day("2026-01-13") : Self.day("2026-01-15")
            let message = composer.message(for: job, runDate: runDate, messageID: composer.newMessageID(for: job, runDate: runDate))
            let outcome = transport.send(from: composer.from.address, to: job.email.address, message: message.rendered())
            guard case .accepted = outcome else {
                Issue.record("\(label): \(outcome) \(relay.log.suffix(2000))")
                continue
            }
            let delivery = try #require(try Self.arrived(mail, from: relayed.count, count: 1, relay).first)
            relayed.append((label, delivery))
        }
        #expect(relayed.count == DeliveryJob.Kind.mailed.count * Self.languages.count + Self.languages.count + 1)
        #expect(try MailParser.parse(try #require(relayed.last).delivery.raw).contentType == "multipart/alternative")
        try Self.accepted(relayed, relay: relay, mail: mail)
    }

    @Test("the relay's checks have teeth: a bare LF, an 8-bit header and an 8-bit body not declared 8BITMIME are each refused, and a client that will not STARTTLS is turned away")
    func strictRelayRefuses() throws {
        try #require(Postfix.isAvailable, "postfix is not installed (scripts/install-deps.sh)")
        let env = try TestEnvironment.require()
        let mail = try Mailbox()
        let relay = try Self.relay(mail)
        defer { relay.stop() }
        func send(_ message: String, tls: String = "starttls") throws -> SendOutcome {
            let configuration = try ConfigurationLoader(environment: [
                "FROM_EMAIL": "noreply@sileme.app", "SMTP_HOST": "localhost", "SMTP_PORT": "\(relay.port)", "SMTP_TLS": tls,
                "SMTP_CA_FILE": env.caFile, "SMTP_TIMEOUT_SECONDS": "10",
            ], filePath: nil).load()
            return try configuration.mail.makeMailTransport().send(from: "noreply@sileme.app", to: mail.address("control"), message: Array(message.utf8))
        }
        let head = "From: noreply@sileme.app\r\nTo: \(mail.address("control"))\r\nDate: Fri, 16 Jan 2026 09:00:00 +0800\r\n"
            + "Message-ID: <control.\(UUID().uuidString)@sileme.app>\r\nMIME-Version: 1.0\r\n"
        // Each refused with the check's own words, not by some other rule.
        let refused = [
            ("a bare LF", head + "Subject: a bare LF\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\none\ntwo\r\n", "starttls", "bare <LF>"),
            ("an 8-bit header", head + "Subject: 关于 王秀英\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nbody\r\n", "starttls",
             "8-bit data in message header"),
            ("an undeclared 8-bit body", head + "Subject: 8-bit\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n王秀英\r\n", "starttls",
             "8-bit data in message body"),
            ("no STARTTLS", head + "Subject: plain\r\n\r\nbody\r\n", "none", "STARTTLS"),
        ]
        for (what, message, tls, words) in refused {
            let outcome = try send(message, tls: tls)
            // A refusal of the message is permanent; a refusal of the session (no STARTTLS: `530`
            // to MAIL FROM) is the relay's — transient, the server unusable, for a fallback relay
            // or a later pass (docs/delivery.md, "How outcomes are classified").
            let reply: String
            switch outcome {
            case .permanent(let text) where tls != "none": reply = text
            case .transient(let text, true) where tls == "none": reply = text
            default:
                Issue.record("\(what): \(outcome)")
                continue
            }
            #expect(reply.contains(words), "\(what): \(reply)")
            print("strict relay, \(what): \(reply)")
        }
        #expect(try mail.deliveries().isEmpty, "nothing refused was relayed: \(relay.log)")
    }

    static func day(_ text: String) -> CalendarDate { CalendarDate(parsing: text)! }

    /// One job of each mailed kind for a contact of each shipped language, and an alert after a
    /// pause (its own words) in each, with what a run reads for each kind: the alert it answers,
    /// the check-in, who acknowledged or said how it ended. Each to an address of its own.
    static func jobs(_ mail: Mailbox) throws -> [(label: String, job: DeliveryJob)] {
        let user = UUID().uuidString.lowercased()
        let at = Date().addingTimeInterval(-3600)
        let alertID = MailMessage.makeMessageID(userID: user, runDate: "2026-01-13", domain: "sileme.app")
        var jobs: [(label: String, job: DeliveryJob)] = []
        for language in languages {
            for kind in DeliveryJob.Kind.mailed + [.alert] {
                let paused = kind == .alert && jobs.contains { $0.label == "alert \(language)" }
                let label = paused ? "alert after a pause \(language)" : "\(kind.rawValue) \(language)"
                let threaded = DeliveryJob.Kind.threaded.contains(kind)
                var job = DeliveryJob(
                    kind: kind, userID: user, name: try DisplayName(cleaning: "王秀英"),
                    email: try EmailAddress(validating: mail.address("\(paused ? "paused" : kind.rawValue).\(language.lowercased())")),
                    notificationDate: threaded ? day("2026-01-13") : nil,
                    missedDays: kind == .followUp ? 3 : 2, lastCheckIn: day(paused ? "2026-01-02" : "2026-01-10"),
                    pausedUntil: paused ? day("2026-01-10") : nil, inReplyTo: threaded ? alertID : nil,
                    checkedIn: kind == .allClear ? (at, day("2026-01-15")) : nil,
                    acknowledgement: kind == .acknowledged ? ("daughter@example.com", at) : nil,
                    outcome: kind == .outcomeOK || kind == .outcomeUnreachable ? ("daughter@example.com", at) : nil)
                job.languages = .init(contact: language)
                jobs.append((label, job))
            }
        }
        return jobs
    }
}
