import Bounce
import Config
import Foundation
import Logging
import Store
import Systemd
import Values

/// Reads the bounce mailbox (`BOUNCE_MAILBOX`, docs/bounces.md): every `BOUNCE_POLL_SECONDS` in the
/// daemon (`loop`, on a thread of its own), or once (`poll`, the `bounces` command).
///
/// Each message is read, its key found (`key(of:tags:)`), its row looked up, and what to do
/// decided by a pure function (`decide`); then the effect is committed in the database (a batch of
/// messages to a transaction), and only then is the message removed — or kept aside, never deleted, when it names no row of ours or is
/// not a report to act on. A crash between the commit and the removal leaves the message, and
/// reading it again changes nothing (`BounceStore`'s events are keyed by the message's hash).
///
/// A mailbox or a database that cannot be reached ends the poll (logged once, until it works
/// again); the messages stay for the next one. The reader never holds a session while the
/// mailbox is empty, and the daemon's alerting never waits for it: it is its own thread with its
/// own connection, opened only for a poll that found messages.
///
/// Sendable unchecked, and it must stay so: its mailbox, kept from one poll to the next, wraps a
/// libcurl handle (IMAPS, POP3S) that must never be used from two threads, and only one thread
/// polls — the daemon's `sileme-bounces`, or the `bounces` command's. A lock around the mailbox
/// would let two threads share that handle; the confinement is what keeps it safe.
package final class BounceReader: @unchecked Sendable {
    /// What one poll did.
    package struct Tally: Sendable, Equatable {
        /// Messages read (or found too large).
        package var read = 0
        /// Rows newly `bounced` (their contact `undeliverable` when the address is dead).
        package var bounced = 0
        /// Transient bounces and complaints recorded.
        package var noted = 0
        /// Messages removed after their effect (a report applied before included).
        package var removed = 0
        /// Reports that named no row of ours (recorded, kept aside).
        package var unmatched = 0
        /// Messages kept aside: the unmatched ones and those not to act on.
        package var setAside = 0
        /// Canaries recorded back, or lost by a report about them.
        package var canaries = 0

        /// Creates an empty tally.
        package init() {}
    }

    private let settings: BounceSettings
    private let database: DatabaseSettings
    private let tags: BounceTag
    private let batchSize: Int
    private let logger: Logger
    /// Where a canary lost by a report about it is announced besides the journal (`notifier.canary_lost`).
    private let webhook: WebhookSettings?
    private let appName: String
    private var mailbox: (any BounceMailbox)?
    /// Whether the last poll failed (its warning is logged once, until a poll succeeds again).
    private var failing = false
    /// When the reader last wrote its record (`BounceStore.recordPoll`) after an empty poll.
    private var recordedAt: Date?

    /// How often an empty poll writes the reader's record (its `read_at`): an empty poll opens
    /// no database session otherwise, so `check`'s "last read" is at most this old while the
    /// mailbox stays empty.
    package static let recordInterval: TimeInterval = 300

    /// A reader of `settings`' mailbox that records into `database`; `mailbox`: one opened
    /// already (a test's IMAP server, verified with its own certificate), else the configured one.
    /// `batchSize`: the messages a transaction settles (a test of a crash between batches takes few).
    /// `webhook`, `appName`: the daemon's, to announce a canary a report says bounced.
    package init(settings: BounceSettings, database: DatabaseSettings, logger: Logger, mailbox: (any BounceMailbox)? = nil,
                 batchSize: Int = BounceReader.defaultBatchSize, webhook: WebhookSettings? = nil, appName: String = "") {
        self.webhook = webhook
        self.appName = appName
        self.batchSize = max(1, batchSize)
        self.settings = settings
        self.database = database
        self.logger = logger
        self.mailbox = mailbox
        tags = BounceTag(settings: settings)
    }

    /// The daemon's loop: a poll every `BOUNCE_POLL_SECONDS` until `stop` is raised. A failed
    /// poll is logged and tried again at the next; nothing here stops the daemon.
    package func loop(stop: StopSignal) {
        while !stop.isStopped {
            do {
                let tally = try poll(stop: stop)
                if failing {
                    logger.notice("bounce mailbox \(settings.mailbox) read again")
                    failing = false
                }
                if tally.read > 0 { logger.notice("bounce mailbox: \(Self.summary(tally))") }
            } catch where stop.isStopped {
                break
            } catch {
                if !failing {
                    logger.warning("cannot read the bounce mailbox \(settings.mailbox): \(error); trying again every \(settings.pollSeconds) s",
                                   metadata: NotifierEvent.bounceMailboxUnavailable.metadata)
                    failing = true
                }
                mailbox = nil  // a new session next time
                recordFailure()
            }
            _ = stop.sleep(TimeInterval(settings.pollSeconds))
        }
    }

    /// One poll: every message waiting, read, decided, its effect committed, then removed or kept
    /// aside. Throws when the mailbox or the database cannot be used (what is left stays for the
    /// next poll).
    package func poll(stop: StopSignal) throws -> Tally {
        let mailbox = try self.mailbox ?? BounceMailboxes.open(settings, stop: stop)
        self.mailbox = mailbox
        return try poll(mailbox, stop: stop)
    }

    /// A failed poll in the reader's record, when the database can be reached (when it cannot, that
    /// is what failed, and the warning said so).
    private func recordFailure() {
        do {
            let db = try PGConnection(database, applicationName: "sileme-notifier (bounces)")
            try BounceStore.recordPoll(db, reports: 0, bounced: 0, keptAside: 0, failed: true)
            recordedAt = nil
        } catch {
            logger.debug("bounce mailbox: its failed poll not recorded: \(error)")
        }
    }

    /// Whether a poll that read `tally` writes the reader's record: one that read something, and
    /// an empty one every `recordInterval` (pure).
    package static func records(_ tally: Tally, now: Date, lastRecorded: Date?) -> Bool {
        guard tally.read == 0, let lastRecorded else { return true }
        return now.timeIntervalSince(lastRecorded) >= recordInterval
    }

    /// How many messages one transaction settles: their effects are committed together, then the
    /// messages are removed or set aside one by one. One commit per report made a full mailbox wait
    /// on the server's commits; a batch that fails is rolled back whole and read again next poll.
    package static let defaultBatchSize = 100

    /// `poll` over the opened mailbox (generic: each mailbox names its messages its own way), a
    /// batch at a time: read and parsed (no database), then every effect of the batch in one
    /// transaction, then — after its commit — each message settled and its lines logged.
    private func poll<Mailbox: BounceMailbox>(_ mailbox: Mailbox, stop: StopSignal) throws -> Tally {
        var tally = Tally()
        var db: PGConnection?
        func connection() throws -> PGConnection {
            if let db { return db }
            let opened = try PGConnection(database, applicationName: "sileme-notifier (bounces)")
            db = opened
            return opened
        }
        var waiting = try mailbox.list()[...]
        while !waiting.isEmpty && !stop.isStopped {
            var batch: [(message: Mailbox.Message, report: BounceReport, fingerprint: String?)] = []
            while batch.count < batchSize, let message = waiting.popFirst(), !stop.isStopped {
                let bytes = try mailbox.read(message, limit: BounceReport.maximumBytes)
                batch.append((message, bytes.map(BounceReport.read) ?? BounceReport(verdict: .tooLarge), bytes.map(BounceMailboxes.fingerprint)))
            }
            tally.read += batch.count
            // The batch's effects in one transaction — when one of them needs the database at all
            // (only reports about a mail are looked up; the rest is kept aside untouched).
            func effects(_ session: () throws -> PGConnection) throws -> [Settlement] {
                try batch.map { message, report, fingerprint in
                    let key = Self.key(of: report, tags: tags)
                    var delivery: BounceStore.Delivery?
                    if Self.reports.contains(report.verdict) {
                        switch key {
                        case .tag(let row): delivery = try BounceStore.delivery(session(), id: row)
                        case .messageID(let id): delivery = try BounceStore.delivery(session(), messageID: id)
                        case .forged, .nothing, .canary, .canaryReport, .forgedCanary: break
                        }
                    }
                    return try effect(Self.decide(report, key: key, delivery: delivery), report: report,
                                      fingerprint: fingerprint, message: mailbox.name(message), tally: &tally, db: session)
                }
            }
            let settlements: [Settlement]
            if batch.contains(where: { Self.reports.contains($0.report.verdict) }) {
                let open = try connection()
                settlements = try open.transaction { try effects { open } }
            } else {
                settlements = try effects(connection)
            }
            // After the commit: a failure here leaves the message for the next poll, which finds
            // its effect done.
            for ((message, _, _), settlement) in zip(batch, settlements) {
                do {
                    if settlement.remove { try mailbox.remove(message) } else { try mailbox.setAside(message) }
                } catch {
                    logger.error("bounce mailbox: cannot \(settlement.remove ? "remove" : "set aside") \(mailbox.name(message)): \(error); it is read again next poll")
                }
                if settlement.remove { tally.removed += 1 } else { tally.setAside += 1 }
                settlement.log()
            }
        }
        let now = Date()
        if Self.records(tally, now: now, lastRecorded: recordedAt) {
            try BounceStore.recordPoll(connection(), reports: tally.read, bounced: tally.bounced, keptAside: tally.setAside, failed: false)
            recordedAt = now
        }
        return tally
    }

    /// What is left to do for one message once its batch is committed: remove it (or set it
    /// aside), then log its lines.
    private struct Settlement {
        let remove: Bool
        let log: () -> Void
    }

    /// Writes `decision`'s effect in the batch's transaction (`db`) and says what to do after the
    /// commit: the message removed or set aside, and the journal's lines about it.
    private func effect(_ decision: Decision, report: BounceReport, fingerprint: String?, message: String, tally: inout Tally,
                        db: () throws -> PGConnection) throws -> Settlement {
        let block = report.decidingRecipient
        var fields: Logger.Metadata = [
            "bounce_verdict": "\(report.verdict.rawValue)", "mailbox_message": "\(message)",
        ]
        if let status = block?.status { fields["bounce_status"] = "\(status)" }
        // The line about the bounced row, logged after the commit.
        var bouncedLine: (() -> Void)?
        switch decision {
        case .bounce(let delivery, let bounceClass):
            let event = BounceStore.Event(report: fingerprint ?? message, kind: .permanent, domain: Self.domain(delivery.contact),
                                          logID: delivery.id, status: block?.status, diagnostic: block?.diagnostic,
                                          bounceClass: bounceClass)
            let applied = try BounceStore.applyPermanent(db(), event)
            fields.merge(Self.rowFields(delivery)) { $1 }
            fields["bounce_class"] = "\(bounceClass.rawValue)"
            if applied.bounced {
                tally.bounced += 1
                let masked = EmailMasking.mask(delivery.contact)
                let diagnostic = Self.masked(block?.diagnostic ?? "", contact: delivery.contact)
                let said = "\(block?.status ?? "5.x.x") \(diagnostic)"
                let lineFields = fields.merging(["notification_kind": "\(delivery.kind)", "diagnostic": "\(diagnostic)"]) { $1 }
                if applied.undeliverable {
                    let metadata = NotifierEvent.contactUndeliverable.metadata.merging(lineFields) { $1 }
                    bouncedLine = { [logger] in
                        logger.warning("contact \(masked) of user \(delivery.userID) is undeliverable: \(said)", metadata: metadata)
                    }
                } else {
                    // Not a dead address: the mail did not arrive, the contact stays in use (docs/bounces.md).
                    bouncedLine = { [logger] in
                        logger.notice("\(delivery.kind) to contact \(masked) of user \(delivery.userID) bounced (\(bounceClass.rawValue)): \(said); the contact stays in use",
                                      metadata: lineFields)
                    }
                }
            }
            fields["bounce_action"] = applied.recorded ? "bounced" : "applied_before"
        case .note(let kind, let delivery):
            let event = BounceStore.Event(report: fingerprint ?? message, kind: kind, domain: Self.domain(delivery.contact),
                                          logID: delivery.id, status: block?.status, diagnostic: block?.diagnostic)
            if try BounceStore.record(db(), event) { tally.noted += 1 }
            fields.merge(Self.rowFields(delivery)) { $1 }
            fields["bounce_action"] = "\(kind.rawValue)"
        case .remove:
            fields["bounce_action"] = "removed"
        case .unmatched(let reason):
            if let fingerprint {
                try BounceStore.record(db(), BounceStore.Event(report: fingerprint, kind: .unmatched,
                                                               domain: Self.domain(block?.address ?? ""), status: block?.status))
            }
            tally.unmatched += 1
            fields["bounce_action"] = "set_aside"
            fields["bounce_reason"] = "\(reason.rawValue)"
        case .setAside(let reason):
            fields["bounce_action"] = "set_aside"
            fields["bounce_reason"] = "\(reason.rawValue)"
        case .canaryBack(let id):
            fields["canary_id"] = "\(id)"
            if let back = try CanaryStore.back(db(), id: id) {
                tally.canaries += 1
                fields["relay"] = "\(back.relay)"
                fields["bounce_action"] = "canary_back"
                let latency = String(format: "%.1f", back.latency)
                bouncedLine = { [logger] in
                    logger.info("canary \(id) through \(back.relay) came back after \(latency) s",
                                metadata: ["relay": "\(back.relay)", "canary_id": "\(id)", "canary_latency": "\(latency)"])
                }
            } else {
                fields["bounce_action"] = "removed"  // back before, or another database's
            }
        case .canaryBounced(let id, let status):
            fields["canary_id"] = "\(id)"
            fields["bounce_action"] = "canary_bounced"
            if let lost = try CanaryStore.markLost(db(), id: id, reason: "bounced \(status ?? "5.x.x")") {
                tally.canaries += 1
                bouncedLine = { [logger, webhook, appName] in
                    CanarySender.announceLost(lost, reason: "bounced", detail: "a delivery report came back: \(status ?? "5.x.x") \(block?.diagnostic ?? "")",
                                              status: status, webhook: webhook, appName: appName, logger: logger)
                }
            }
        }
        let remove: Bool
        switch decision {
        case .bounce, .note, .remove, .canaryBack, .canaryBounced: remove = true
        case .unmatched, .setAside: remove = false
        }
        let metadata = NotifierEvent.bounceReceived.metadata.merging(fields) { $1 }
        return Settlement(remove: remove) { [logger] in
            bouncedLine?()
            if remove {
                logger.info("bounce report \(message): \(report.verdict.rawValue), \(fields["bounce_action"].map { "\($0)" } ?? "")", metadata: metadata)
            } else {
                logger.notice("bounce mailbox: kept \(message) aside (\(fields["bounce_reason"].map { "\($0)" } ?? "")) for a person to read",
                              metadata: metadata)
            }
        }
    }

    /// The verdicts of a report about a mail: only these are looked up in the database.
    static let reports: Set<BounceReport.Verdict> = [.permanent, .transient, .complaint, .delivered]

    /// The journal's fields of a delivery row.
    private static func rowFields(_ delivery: BounceStore.Delivery) -> Logger.Metadata {
        ["log_id": "\(delivery.id)", "user_id": "\(delivery.userID)", "recipient": "\(EmailMasking.mask(delivery.contact))"]
    }

    /// The domain of `address`, lower-cased ('' without one).
    static func domain(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@") else { return "" }
        return String(address[address.index(after: at)...]).lowercased()
    }

    /// `diagnostic` with the contact's address masked, as every log line writes an address.
    static func masked(_ diagnostic: String, contact: String) -> String {
        contact.isEmpty ? diagnostic
            : diagnostic.replacingOccurrences(of: contact, with: EmailMasking.mask(contact), options: .caseInsensitive)
    }

    /// What `check` sees of the mailbox: a real listing through the reader's own mailbox code —
    /// how many messages wait, and how many are kept aside for a person. Changes nothing (no
    /// message is read). Throws what the reader would meet. `mailbox`: one opened already (a
    /// test's server with its own certificate), else the configured one.
    package static func probe(_ settings: BounceSettings, mailbox: (any BounceMailbox)? = nil) throws -> (waiting: Int, keptAside: Int) {
        let mailbox = try mailbox ?? BounceMailboxes.open(settings, timeoutSeconds: 10)
        return try probe(mailbox)
    }

    private static func probe<Mailbox: BounceMailbox>(_ mailbox: Mailbox) throws -> (waiting: Int, keptAside: Int) {
        (try mailbox.list().count, try mailbox.unparsedCount())
    }

    /// A poll's counts for people.
    package static func summary(_ tally: Tally) -> String {
        "\(tally.read) read: \(tally.bounced) bounced, \(tally.noted) noted, \(tally.removed) removed, "
            + "\(tally.unmatched) unmatched, \(tally.setAside) kept aside"
            + (tally.canaries > 0 ? ", \(tally.canaries) canaries" : "")
    }
}
