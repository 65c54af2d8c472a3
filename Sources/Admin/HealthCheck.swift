import Values
import Config
import Delivery
import Store
import Foundation
import Mail
import Webhook

/// What `sileme-notifier check` verifies: the configuration can send, the database answers and
/// its schema is current, the templates render, and the mail server accepts a connection, TLS
/// and AUTH (with `MAIL_TRANSPORT=outbox`: that a probe file can be written in `OUTBOX_DIR`), and
/// with `WEBHOOK_URL` set, that the endpoint answers a signed `ping` event with 2xx. It also says
/// how many check-ins wait to be folded into the summary, and warns when no notifier has folded
/// them for over a minute (no daemon running: the summary and the all-clears wait for the next run),
/// and warns of every role besides the notifier's that can reach its schema, or the app's tables
/// without row-level security (`Exposure`: on Supabase, the app's anonymous key). With
/// `BOUNCE_MAILBOX` set, it lists the bounce mailbox through the reader's own code and says when a
/// daemon last read it. It says `ESCALATE_AFTER` and warns of the streaks unheard now (nobody
/// answered an alert or its escalation), naming how many and the oldest.
/// Each finding says what is wrong in words, never with a secret.
package struct HealthCheck: Sendable {
    /// One line of the check's report.
    package struct Finding: Sendable {
        /// What was checked.
        package let subject: String
        /// Whether it is usable.
        package let ok: Bool
        /// Usable, but something the operator should look at (printed `warn`; no exit status).
        package var warning = false
        /// Details.
        package let detail: String
        /// The exit status the line means when it is not `ok`: 78 a configuration problem, 69 an
        /// unreachable server, 1 anything else.
        package var failure = ExitStatus.failure
    }

    /// The configuration to check.
    package let configuration: NotifierConfiguration

    /// Creates a check.
    package init(configuration: NotifierConfiguration) { self.configuration = configuration }

    /// Runs every check (none stops the others) and returns the findings in order, with the exit
    /// status they mean: 78 for configuration problems, 69 for an unreachable server, else 0.
    package func run() -> (findings: [Finding], status: ExitStatus) {
        var findings: [Finding] = []
        var ackCount: String?
        var bounceRecord: Result<BounceStore.MailboxRecord?, any Error>?
        var canaryFigures: Result<[CanaryStore.Figures], any Error>?
        var templates: MailTemplates?
        var escalationFigures: Result<EscalationFigures, any Error>?
        func note(_ subject: String, _ ok: Bool, _ detail: String, failure: ExitStatus) {
            findings.append(Finding(subject: subject, ok: ok, detail: detail, failure: failure))
        }

        note("version", true, "sileme-notifier \(NotifierVersion.current)", failure: .success)
        do {
            try ConfigurationLoader.validateForSending(configuration)
            note("configuration", true, "\(configuration.mail.transportDescription), "
                 + "from \(configuration.fromEmail ?? ""), zone \(configuration.timeZone.identifier), "
                 + "threshold \(configuration.rule.thresholdDays) days, catch-up \(configuration.rule.catchUpDays) days, "
                 + "supersede \(configuration.rule.supersede ? "on" : "off")",
                 failure: .configuration)
        } catch {
            note("configuration", false, error.description, failure: .configuration)
        }
        do {
            let loaded = try MailTemplates(directory: configuration.templateDirectory, defaultLanguage: configuration.defaultLanguage)
            templates = loaded
            let sample = loaded.render(TemplateVariables(
                userName: "张三", missDays: configuration.rule.thresholdDays,
                lastCheckInDate: CalendarDate(year: 2026, month: 1, day: 10)!,
                runDate: CalendarDate(year: 2026, month: 1, day: 13)!, appName: configuration.appName))
            note("templates", true, "subject: \(sample.subject)", failure: .configuration)
            note("languages", true, Self.languages(loaded), failure: .configuration)
        } catch {
            note("templates", false, error.description, failure: .configuration)
        }
        do {
            let db = try PGConnection(configuration.database)
            let version = try db.execute(SQLStatement("SHOW server_version"))[0].string("server_version") ?? "?"
            let pending = try Migrator(directory: configuration.migrationsDirectory).pending(db)
            note("database", pending.isEmpty,
                 pending.isEmpty ? "PostgreSQL \(version), schema current"
                                 : "PostgreSQL \(version), migrations pending: \(pending.joined(separator: ", ")) (run `sileme-notifier migrate`)",
                 failure: .failure)
            findings.append(Self.sessions(DatabaseSessions(configuration), pooled: (try? db.isDirect).map { !$0 }))
            do {
                try RowSecurity.verify(db)
                note("row security", true, "every row of \(RowSecurity.tables.joined(separator: ", ")) is readable", failure: .configuration)
            } catch let error as ConfigurationError {
                note("row security", false, error.description, failure: .configuration)
            }
            if pending.isEmpty {
                // A check_ins replaced since `migrate` (partitioned by the app) has none of the
                // notifier's triggers: its check-ins would go unseen.
                let found = try CheckInTriggers.find(db)
                let problem = CheckInTriggers.problem(found)
                note("check-in triggers", problem == nil,
                     problem ?? "\(CheckInTriggers.names.count) on \(found.table ?? "check_ins")\(found.partitioned ? " (partitioned: on every partition)" : "")",
                     failure: .configuration)
                do {
                    let open = try Exposure.findings(db)
                    for finding in open {
                        findings.append(Finding(subject: "exposed", ok: true, warning: true, detail: finding.description))
                    }
                    if open.isEmpty {
                        note("exposure", true, "nothing in schema \(configuration.databaseSchema) is open to another role, "
                             + "and \((OwnSchema.appTables + OwnSchema.sharedTables).joined(separator: ", ")) are open to none without row-level security",
                             failure: .configuration)
                    }
                } catch let error as DatabaseError {
                    note("exposure", false, error.description, failure: .configuration)
                }
                if configuration.ack != nil {
                    do {
                        let recent = try AcknowledgementStore().count(db, since: Date().addingTimeInterval(-30 * 86400))
                        ackCount = "\(recent) acknowledgement\(recent == 1 ? "" : "s") in the last 30 days"
                    } catch let error as DatabaseError {
                        note("acknowledgements", false, error.description, failure: .failure)
                    }
                }
                do {
                    let backlog = try CheckInQueue.backlog(db)
                    findings.append(Finding(subject: "check-in queue", ok: true, warning: backlog.isStale, detail: backlog.description))
                } catch let error as DatabaseError {
                    note("check-in queue", false, error.description, failure: .configuration)
                }
                if configuration.bounce != nil {
                    bounceRecord = Result { try BounceStore.mailboxRecord(db) }
                }
                if configuration.canary != nil {
                    canaryFigures = Result { try CanaryStore.figures(db) }
                }
                do {
                    findings.append(Self.holds(try HoldStore.open(db), configuration: configuration))
                } catch let error as DatabaseError {
                    note("held alerts", false, error.description, failure: .configuration)
                }
                escalationFigures = Result { try EscalationFigures.read(db) }
                if let templates {
                    do {
                        findings.append(Self.languagesAsked(try LanguageUse.read(db), templates: templates))
                    } catch let error as DatabaseError {
                        note("languages asked for", false, error.description, failure: .failure)
                    }
                }
            }
        } catch let error as DatabaseError {
            note("database", false, error.description, failure: error.kind == .unreachable ? .unavailable : .failure)
        } catch {
            note("database", false, "\(error)", failure: .configuration)
        }
        findings.append(Self.escalation(after: configuration.escalateAfter, figures: escalationFigures, now: Date()))
        if configuration.databaseReadURL != nil {
            do {
                let standby = try PGConnection(configuration.database, \.readURL)
                let recovering = try standby.execute(SQLStatement("SELECT pg_is_in_recovery() AS recovering"))[0].bool("recovering")
                note("read database", true, recovering ? "a hot standby answers (DATABASE_READ_URL)" : "answers (DATABASE_READ_URL; not a standby)",
                     failure: .unavailable)
            } catch {
                note("read database", false, error.description, failure: error.kind == .unreachable ? .unavailable : .failure)
            }
        }
        if let ack = configuration.ack {
            // The page's listener (docs/acknowledgement.md): a daemon that is not running is a warning, not a failure.
            let links = ack.baseURL.map { "links to \($0)/…" } ?? "no links in mails (ACK_BASE_URL unset)"
            let counted = ackCount.map { "; " + $0 } ?? ""
            if let listen = ack.listen {
                let problem = AckPageProbe.problem(host: listen.host, port: listen.port)
                findings.append(Finding(subject: "acknowledgement page", ok: true, warning: problem != nil,
                                        detail: "\(links); ACK_LISTEN \(listen) (at most \(ack.maxConnections) connections): \(problem ?? "answers")\(counted)"))
            } else {
                findings.append(Finding(subject: "acknowledgement page", ok: true,
                                        detail: "\(links); not served here (ACK_LISTEN unset)\(counted)"))
            }
        }
        if let webhook = configuration.webhook {
            // A signed `ping` event: the endpoint, its TLS and, if the receiver checks it, the secret.
            let ping = "ping_" + String(UInt64.random(in: .min ... .max), radix: 16)
            do {
                // In the body template's format when there is one: what the gateway will get.
                let template = try webhook.bodyTemplate.map { try WebhookBodyTemplate($0, appName: configuration.appName) }
                let outcome = try WebhookTransport(settings: webhook).send(try WebhookEvent.ping(id: ping, timestamp: Date()), using: template)
                let ok = if case .delivered = outcome { true } else { false }
                note("webhook", ok, "\(webhook.displayURL): signed ping \(ping): \(outcome.reason)", failure: .unavailable)
            } catch {
                note("webhook", false, "\(webhook.displayURL): \(error)", failure: .failure)
            }
        }
        if let bounce = configuration.bounce {
            // A real listing through the reader's code: the mailbox, its TLS and its password.
            let listing = Result { try BounceReader.probe(bounce) }
            findings.append(Self.bounceMailbox(bounce, listing: listing, record: bounceRecord, now: Date()))
        }
        if configuration.mailTransport == .outbox, let directory = configuration.outboxDirectory {
            // A probe file created, synced and removed in the outbox's tmp/.
            let outcome = OutboxTransport(directory: directory).verify()
            if case .accepted = outcome {
                note("outbox", true, outcome.text, failure: .unavailable)
            } else {
                note("outbox", false, outcome.text, failure: .unavailable)
            }
            return (findings, Self.status(findings))
        }
        // Every relay, the primary and each of SMTP_FALLBACK: one that cannot be reached fails the
        // check even while another carries the mail (someone has to mend it before that one fails too).
        for (index, relay) in configuration.mail.relays.enumerated() {
            let subject = index == 0 ? "mail server" : "fallback relay \(index)"
            do {
                let outcome = try SMTPTransport(settings: relay).verify()
                if case .accepted = outcome {
                    note(subject, true, "\(relay.url): connected as \(relay.heloName), "
                         + (relay.tls == .none ? "no TLS" + (index == 0 ? " (SMTP_TLS=none)" : " (tls=none)") : "TLS verified")
                         + (relay.user == nil ? ", no AUTH" : ", authenticated"), failure: .unavailable)
                } else {
                    note(subject, false, "\(relay.url): \(outcome.text)", failure: .unavailable)
                }
            } catch {
                note(subject, false, error.description, failure: .failure)
            }
        }
        if let canary = configuration.canary {
            findings += Self.canaries(canary, relays: configuration.mail.relays.map(\.url), figures: canaryFigures, now: Date())
        }
        return (findings, Self.status(findings))
    }

    /// The exit status of the lines — pure: a configuration problem's (78) whatever else failed,
    /// else the first failed line's, else 0.
    static func status(_ findings: [Finding]) -> ExitStatus {
        findings.filter { !$0.ok }.reduce(ExitStatus.success) { status, finding in
            status == .success || finding.failure == .configuration ? finding.failure : status
        }
    }

    /// The bounce mailbox's line (docs/bounces.md), from a listing of it and the reader's record
    /// (nil: not read, the database being unusable) — pure. A mailbox that cannot be listed fails
    /// the check (69); one the daemon has not read lately (or ever) is a warning: no daemon reads it.
    static func bounceMailbox(_ settings: BounceSettings, listing: Result<(waiting: Int, keptAside: Int), any Error>,
                              record: Result<BounceStore.MailboxRecord?, any Error>?, now: Date) -> Finding {
        let read: String
        var stale = false
        switch record {
        case .success(let record?) where record.readAt != nil:
            let age = max(0, Int(now.timeIntervalSince(record.readAt!)))
            read = "last read \(CalendarDate.rfc3339(record.readAt!)) (\(age) s ago)"
            stale = Double(age) > BounceReader.recordInterval + 2 * Double(settings.pollSeconds)
        case .success:
            read = "never read by a daemon yet"
            stale = true
        case .failure(let error):
            read = "when it was last read unknown (\(error))"
        case nil:
            read = "when it was last read unknown (the database cannot be read)"
        }
        switch listing {
        case .success(let counts):
            let detail = "\(settings.mailbox): reachable, \(counts.waiting) waiting, \(counts.keptAside) kept aside unparsed; \(read)"
                + (stale ? "; is the daemon running?" : "")
            return Finding(subject: "bounce mailbox", ok: true, warning: stale, detail: detail)
        case .failure(let error):
            return Finding(subject: "bounce mailbox", ok: false, detail: "\(settings.mailbox): cannot be read: \(error); \(read)",
                           failure: .unavailable)
        }
    }

    /// The intake guard's line: the alerts held now (a warning: the operator decides whether the
    /// app was down), or that none is, with the guard's settings.
    /// The database sessions held at most (`DatabaseSessions`), and what a pooler must allow.
    static func sessions(_ sessions: DatabaseSessions, pooled: Bool?) -> Finding {
        let most = pooled == false ? sessions.daemonDirect : sessions.daemon
        let detail = "held at most: \(sessions)"
            + (pooled == true
               ? "; DATABASE_URL goes through a connection pooler: in session mode its pool for this database and user must allow \(most) "
                 + "(PgBouncer's default_pool_size), at least \(DatabaseSessions.minimumForRun) for a run with one sender"
               : "; within PostgreSQL's max_connections (\(most) for the daemon)")
        return Finding(subject: "database sessions", ok: true, detail: detail)
    }

    static func holds(_ open: HoldStore.Open, configuration: NotifierConfiguration) -> Finding {
        let guardSettings = configuration.intakeGuard
        guard open.count > 0 else {
            let state = guardSettings.isOn
                ? "none held (a day below \(guardSettings.dropRatio) of its usual intake, where that is at least \(guardSettings.minUsers) users, holds alerts \(guardSettings.holdHours) h)"
                : "none held; the intake guard is off (INTAKE_DROP_RATIO=0)"
            return Finding(subject: "held alerts", ok: true, detail: state)
        }
        let gaps = open.gapDays.map(\.description).joined(separator: ", ")
        let release = open.nextRelease.map { CalendarDate.rfc3339($0) } ?? "?"
        return Finding(subject: "held alerts", ok: true, warning: true,
                       detail: "\(open.count) user(s)' alerts held over the intake gap(s) \(gaps); they go out at \(release), or now with `sileme-notifier release`")
    }
}

extension HealthCheck {
    /// The `languages` line: which languages have templates and where from, the default, and
    /// each kind a language writes in another (docs/languages.md).
    static func languages(_ templates: MailTemplates) -> String {
        let names = templates.languages.sorted { $0.identifier < $1.identifier }.map { language in
            language.identifier + (language == templates.defaultLanguage ? " (default)" : "")
                + (templates.folders.contains(language) ? " from TEMPLATE_DIR" : "")
        }
        var line = names.joined(separator: ", ")
        if !templates.fallbacks.isEmpty {
            line += "; falls back: " + templates.fallbacks.map(\.description).joined(separator: ", ")
        }
        return line
    }
}
