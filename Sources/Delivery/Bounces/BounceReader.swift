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
/// decided by a pure function (`decide`); then the effect is committed in the database, and only
/// then is the message removed — or kept aside, never deleted, when it names no row of ours or is
/// not a report to act on. A crash between the commit and the removal leaves the message, and
/// reading it again changes nothing (`BounceStore`'s events are keyed by the message's hash).
///
/// A mailbox or a database that cannot be reached ends the poll (logged once, until it works
/// again); the messages stay for the next one. The reader never holds a session while the
/// mailbox is empty, and the daemon's alerting never waits for it: it is its own thread with its
/// own connection, opened only for a poll that found messages.
package final class BounceReader: @unchecked Sendable {
    /// What one poll did.
    package struct Tally: Sendable, Equatable {
        /// Messages read (or found too large).
        package var read = 0
        /// Rows newly `bounced` (their contact `undeliverable`).
        package var bounced = 0
        /// Transient bounces and complaints recorded.
        package var noted = 0
        /// Messages removed after their effect (a report applied before included).
        package var removed = 0
        /// Reports that named no row of ours (recorded, kept aside).
        package var unmatched = 0
        /// Messages kept aside: the unmatched ones and those not to act on.
        package var setAside = 0

        /// Creates an empty tally.
        package init() {}
    }

    private let settings: BounceSettings
    private let database: DatabaseSettings
    private let tags: BounceTag
    private let logger: Logger
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
    package init(settings: BounceSettings, database: DatabaseSettings, logger: Logger, mailbox: (any BounceMailbox)? = nil) {
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

    /// `poll` over the opened mailbox (generic: each mailbox names its messages its own way).
    private func poll<Mailbox: BounceMailbox>(_ mailbox: Mailbox, stop: StopSignal) throws -> Tally {
        var tally = Tally()
        var db: PGConnection?
        func connection() throws -> PGConnection {
            if let db { return db }
            let opened = try PGConnection(database, applicationName: "sileme-notifier (bounces)")
            db = opened
            return opened
        }
        for message in try mailbox.list() {
            if stop.isStopped { break }
            tally.read += 1
            let bytes = try mailbox.read(message, limit: BounceReport.maximumBytes)
            let report = bytes.map(BounceReport.read) ?? BounceReport(verdict: .tooLarge)
            let key = Self.key(of: report, tags: tags)
            var delivery: BounceStore.Delivery?
            if Self.reports.contains(report.verdict) {
                switch key {
                case .tag(let row): delivery = try BounceStore.delivery(connection(), id: row)
                case .messageID(let id): delivery = try BounceStore.delivery(connection(), messageID: id)
                case .forged, .nothing: break
                }
            }
            let decision = Self.decide(report, key: key, delivery: delivery)
            let fingerprint = bytes.map(BounceMailboxes.fingerprint)
            try act(decision, report: report, fingerprint: fingerprint, message: mailbox.name(message), tally: &tally,
                    db: connection, settle: { remove in
                        // After the commit: a failure here leaves the message for the next poll,
                        // which finds its effect done.
                        do {
                            if remove { try mailbox.remove(message) } else { try mailbox.setAside(message) }
                        } catch {
                            logger.error("bounce mailbox: cannot \(remove ? "remove" : "set aside") \(mailbox.name(message)): \(error); it is read again next poll")
                        }
                    })
        }
        let now = Date()
        if Self.records(tally, now: now, lastRecorded: recordedAt) {
            try BounceStore.recordPoll(connection(), reports: tally.read, bounced: tally.bounced, keptAside: tally.setAside, failed: false)
            recordedAt = now
        }
        return tally
    }

    /// Commits `decision`'s effect, logs it, then settles the message (`settle(true)`: remove).
    private func act(_ decision: Decision, report: BounceReport, fingerprint: String?, message: String, tally: inout Tally,
                     db: () throws -> PGConnection, settle: (Bool) -> Void) throws {
        let block = report.decidingRecipient
        var fields: Logger.Metadata = [
            "bounce_verdict": "\(report.verdict.rawValue)", "mailbox_message": "\(message)",
        ]
        if let status = block?.status { fields["bounce_status"] = "\(status)" }
        switch decision {
        case .bounce(let delivery):
            let event = BounceStore.Event(report: fingerprint ?? message, kind: .permanent, domain: Self.domain(delivery.contact),
                                          logID: delivery.id, status: block?.status, diagnostic: block?.diagnostic)
            let applied = try BounceStore.applyPermanent(db(), event)
            fields.merge(Self.rowFields(delivery)) { $1 }
            if applied.bounced {
                tally.bounced += 1
                let masked = EmailMasking.mask(delivery.contact)
                let diagnostic = Self.masked(block?.diagnostic ?? "", contact: delivery.contact)
                logger.warning("contact \(masked) of user \(delivery.userID) is undeliverable: \(block?.status ?? "5.x.x") \(diagnostic)",
                               metadata: NotifierEvent.contactUndeliverable.metadata.merging(fields.merging([
                                   "notification_kind": "\(delivery.kind)", "diagnostic": "\(diagnostic)",
                               ]) { $1 }) { $1 })
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
        }
        let remove: Bool
        switch decision {
        case .bounce, .note, .remove: remove = true
        case .unmatched, .setAside: remove = false
        }
        settle(remove)
        if remove { tally.removed += 1 } else { tally.setAside += 1 }
        let metadata = NotifierEvent.bounceReceived.metadata.merging(fields) { $1 }
        if remove {
            logger.info("bounce report \(message): \(report.verdict.rawValue), \(fields["bounce_action"].map { "\($0)" } ?? "")", metadata: metadata)
        } else {
            logger.notice("bounce mailbox: kept \(message) aside (\(fields["bounce_reason"].map { "\($0)" } ?? "")) for a person to read",
                          metadata: metadata)
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
    }
}
