import Bounce
import Config
import Foundation
import Logging
import Mail
import Store
import Systemd
import Values
import Webhook

/// The canary's loop in the daemon (docs/operating.md, "The canary"): every `CANARY_EVERY` one
/// test message through each relay — the primary and each of `SMTP_FALLBACK`, each through that
/// relay alone — to `CANARY_ADDRESS`, tagged `X-Sileme-Canary` with a tag signed by the bounce
/// key, from the bounce address (`BounceTag.canarySender`) so that its bounce comes back too; and
/// each canary not back within `CANARY_WITHIN` marked lost, `canary_lost` in the journal.
///
/// Several daemons share the work: a period is claimed per relay by one insert
/// (`CanaryStore.claim`), and a canary is reported lost by the daemon whose update marked it.
/// Its own thread and connection; a database or relay that fails is logged and tried next tick.
/// Sendable, checked: handed to the thread that runs `loop`; what a step changes (`claimed`,
/// `metricsAt`) is `Locked` — never contended, one thread steps —, and whether the database fails
/// is the loop's own.
package final class CanarySender: Sendable {
    private let canary: CanarySettings
    private let relays: [SMTPSettings]
    private let from: String
    private let tags: BounceTag
    private let database: DatabaseSettings
    private let logger: Logger
    /// The period this daemon last claimed per relay (`CanaryPlan.due`).
    private let claimed = Locked<[String: Date]>([:])
    /// The configuration, for the metrics file (`METRICS_FILE`), and when it was last written.
    private let configuration: NotifierConfiguration
    private let metricsAt = Locked<Date?>(nil)

    /// A sender of `configuration`'s canary (nil when the canary is off).
    package init?(configuration: NotifierConfiguration, logger: Logger) {
        guard let canary = configuration.canary, let bounce = configuration.bounce else { return nil }
        self.canary = canary
        relays = configuration.mail.relays
        from = configuration.mail.fromEmail ?? bounce.address.address
        tags = BounceTag(settings: bounce)
        database = configuration.database
        self.logger = logger
        self.configuration = configuration
    }

    /// How often the loop looks: often enough to send at a period's start and to see a loss
    /// soon after `CANARY_WITHIN`, from 1 to 60 seconds.
    package static func tick(_ settings: CanarySettings) -> TimeInterval {
        let shortest = min(settings.every.components.seconds, settings.within.components.seconds)
        return min(60, max(1, Double(shortest) / 5))
    }

    /// The daemon's loop, until `stop` is raised.
    package func loop(stop: StopSignal) {
        var failing = false
        while !stop.isStopped {
            do {
                try step(now: Date())
                if failing { logger.notice("canary: the database can be used again"); failing = false }
            } catch {
                if !failing { logger.warning("canary: cannot reach the database: \(error); trying again") }
                failing = true
            }
            _ = stop.sleep(Self.tick(canary))
        }
    }

    /// One look: lost canaries marked and reported, then each relay due a canary sent one.
    package func step(now: Date) throws {
        let db = try PGConnection(database, applicationName: "sileme-notifier (canary)")
        var changed = false
        defer {
            // The canaries' figures in the metrics file: after a change, and every minute (one back
            // is recorded by the mailbox reader).
            if configuration.metricsFile != nil, changed || metricsAt.withLock({ $0 }).map({ now.timeIntervalSince($0) >= 60 }) ?? true {
                MetricsFile.update(configuration, db, logger: logger, now: now)
                metricsAt.withLock { $0 = now }
            }
        }
        for open in CanaryPlan.lost(try CanaryStore.open(db), now: now, within: canary.within) {
            if let lost = try CanaryStore.markLost(db, id: open.id, reason: "not_back") {
                changed = true
                announceLost(lost, reason: "not_back", detail: "not back within \(canary.within.components.seconds) s")
            }
        }
        for relay in relays {
            guard let period = CanaryPlan.due(lastClaimed: claimed.withLock({ $0[relay.url] }), now: now, every: canary.every) else { continue }
            claimed.withLock { $0[relay.url] = period }
            guard let id = try CanaryStore.claim(db, relay: relay.url, period: period) else { continue }
            changed = true
            let outcome = send(id: id, through: relay, now: now)
            if case .accepted = outcome {
                logger.info("canary \(id) sent through \(relay.url)", metadata: ["relay": "\(relay.url)", "canary_id": "\(id)"])
            } else if let lost = try CanaryStore.markLost(db, id: id, reason: "not_sent") {
                announceLost(lost, reason: "not_sent", detail: "the relay did not take it: \(outcome.text)")
            }
        }
    }

    /// `announceLost` with this daemon's webhook.
    private func announceLost(_ canary: CanaryStore.Open, reason: String, detail: String) {
        Self.announceLost(canary, reason: reason, detail: detail, webhook: configuration.webhook, appName: configuration.appName, logger: logger)
    }

    /// Sends canary `id` through `relay` alone (a connection of its own, closed after).
    private func send(id: Int64, through relay: SMTPSettings, now: Date) -> SendOutcome {
        let message = Self.message(id: id, tag: tags.canaryTag(id: id), relay: relay.url, from: from, to: canary.address.address, now: now)
        do {
            let transport = try SMTPTransport(settings: relay)
            return transport.send(from: tags.canarySender(id: id), to: canary.address.address, message: message)
        } catch {
            return .transient(reason: "\(error)", serverUnavailable: true)
        }
    }

    /// The canary's text: plain, marked automatic (nobody's auto-responder answers it), its tag in
    /// `X-Sileme-Canary`.
    package static func message(id: Int64, tag: String, relay: String, from: String, to: String, now: Date) -> [UInt8] {
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        let lines = [
            "From: sileme-notifier canary <\(from)>",
            "To: <\(to)>",
            "Subject: sileme-notifier canary \(id) via \(relay)",
            "Date: \(HeaderEncoding.dateHeader(now, timeZone: TimeZone(identifier: "UTC")!))",
            "Message-ID: <canary.\(tag)@\(domain)>",
            "Auto-Submitted: auto-generated",
            "\(BounceReport.canaryHeader): \(tag)",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 7bit",
            "",
            "A test message of sileme-notifier through \(relay): it should come back into the bounce",
            "mailbox, where the daemon reads and removes it. See docs/operating.md, \"The canary\".",
            "",
        ]
        return Array(lines.joined(separator: "\r\n").utf8)
    }

    /// Says a canary is lost: the journal's `canary_lost` (priority crit) and, when the webhook
    /// sends it, `notifier.canary_lost` (one attempt: the journal is the record).
    package static func announceLost(_ canary: CanaryStore.Open, reason: String, detail: String, status: String? = nil,
                                     webhook: WebhookSettings?, appName: String, logger: Logger) {
        logLost(canary, reason: reason, detail: detail, status: status, logger: logger)
        guard let webhook, webhook.sends(.canaryLost) else { return }
        let name = WebhookEventType.canaryLost.rawValue
        do {
            let event = try WebhookEvent.canaryLost(id: "canary_\(canary.id)", timestamp: Date(),
                                                    canary: .init(relay: canary.relay, canaryID: canary.id, reason: reason, sentAt: canary.sentAt))
            let template = try webhook.bodyTemplate.map { try WebhookBodyTemplate($0, appName: appName) }
            let outcome = try WebhookTransport(settings: webhook).send(event, using: template)
            if case .delivered = outcome { return }
            logger.error("webhook \(name) not delivered: \(outcome.reason)", metadata: ["canary_id": "\(canary.id)"])
        } catch {
            logger.error("webhook \(name) not sent: \(error)", metadata: ["canary_id": "\(canary.id)"])
        }
    }

    /// Journals a lost canary (`canary_lost`, priority crit).
    static func logLost(_ canary: CanaryStore.Open, reason: String, detail: String, status: String? = nil, logger: Logger) {
        var fields: Logger.Metadata = [
            "relay": "\(canary.relay)", "canary_id": "\(canary.id)", "reason": "\(reason)",
            "sent_at": "\(ISO8601DateFormatter().string(from: canary.sentAt))",
        ]
        if let status { fields["bounce_status"] = "\(status)" }
        logger.critical("canary \(canary.id) through relay \(canary.relay) is lost: \(detail); mail through it may not be arriving",
                        metadata: NotifierEvent.canaryLost.metadata.merging(fields) { $1 })
    }
}
