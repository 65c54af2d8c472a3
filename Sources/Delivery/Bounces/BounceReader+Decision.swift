import Bounce
import Rule
import Store
import Values

extension BounceReader {
    /// How a report names its delivery row: the tag in the address it was sent to, else the
    /// returned message's `Message-ID`.
    package enum Key: Sendable, Equatable {
        /// A tag this key signed, naming row `row`.
        case tag(row: Int64)
        /// A tag of our bounce address that this key did not sign (forged, altered, another key's):
        /// the report changes nothing, and is not looked up any other way.
        case forged(address: String)
        /// No tag, but the returned message's `Message-ID` (a relay that rewrote the envelope sender).
        case messageID(String)
        /// Neither (named so, not `none`, which an optional would take for its own).
        case nothing
        /// The message is canary `id` come back: its own `X-Sileme-Canary` verifies.
        case canary(id: Int64)
        /// A report sent to canary `id`'s envelope sender: a delivery report about the canary.
        case canaryReport(id: Int64)
        /// An `X-Sileme-Canary` this key did not sign: changes nothing, kept aside.
        case forgedCanary
    }

    /// The key of `report` under `tags` — pure. A tag is looked for in the addresses the report
    /// was sent to, most trustworthy first (`BounceReport.addressedTo`); an address of the bounce
    /// mailbox with a tag that does not verify is a forgery, and the `Message-ID` is then not
    /// asked: a forger who can quote an alert's id must not get around the tag.
    package static func key(of report: BounceReport, tags: BounceTag) -> Key {
        if let tag = report.canaryTag {
            return tags.canary(tag: tag).map { .canary(id: $0) } ?? .forgedCanary
        }
        for address in report.addressedTo {
            if let id = tags.canary(in: address) { return .canaryReport(id: id) }
            if let row = tags.row(in: address) { return .tag(row: row) }
            if isTagged(address, by: tags) { return .forged(address: address) }
        }
        if let id = report.returnedMessageID { return .messageID(id) }
        return .nothing
    }

    /// Whether `address` is `local+anything@domain` of the bounce address (case as `BounceTag` compares).
    static func isTagged(_ address: String, by tags: BounceTag) -> Bool {
        guard let at = address.lastIndex(of: "@"), address[address.index(after: at)...].lowercased() == tags.address.domain,
              let plus = address[..<at].firstIndex(of: "+") else { return false }
        return address[..<plus].drop { $0 == "<" || $0 == " " }.lowercased() == tags.address.localPart.lowercased()
    }

    /// What to do with one message of the mailbox.
    package enum Decision: Sendable, Equatable {
        /// A permanent failure of the row's mail: the row `bounced` with the failure's class — and,
        /// only when the class says the address is dead (`BounceClass.addressIsDead`), the contact
        /// `undeliverable`; then the message is removed.
        case bounce(BounceStore.Delivery, BounceClass)
        /// A transient bounce or a complaint about the row: recorded; then the message is removed.
        case note(BounceStore.Kind, BounceStore.Delivery)
        /// A report that changes nothing (a success notice of our row): removed.
        case remove
        /// A report that names no row of ours: recorded as unmatched, then kept aside.
        case unmatched(Reason)
        /// Not a report to act on (an automatic reply, unparsed, too large): kept aside for a person.
        case setAside(Reason)
        /// Canary `id` came back: recorded back (its latency), then removed. Never a bounce or an answer.
        case canaryBack(id: Int64)
        /// A delivery report says canary `id` did not arrive: lost at once with the report's status;
        /// then removed.
        case canaryBounced(id: Int64, status: String?)
    }

    /// Why a message is kept aside (the journal's `BOUNCE_REASON`).
    package enum Reason: String, Sendable, Equatable {
        case forgedTag = "forged_tag"
        case unknownRow = "unknown_row"
        case noKey = "no_key"
        case otherRecipient = "other_recipient"
        case notMail = "not_mail"
        case autoReply = "auto_reply"
        case unparsed
        case tooLarge = "too_large"
    }

    /// What to do with a message read as `report`, whose key is `key`, and whose key found
    /// `delivery` (nil: no such row) — pure; every case is a unit test.
    ///
    /// Only a report about a mail of ours changes anything. An automatic reply is kept for a person
    /// (it may say something about the contact nobody else will read) rather than deleted; so is
    /// anything unparsed. A canary (its own signed tag) is recorded back and removed, whatever else
    /// it looks like; a report about a canary marks it lost only when permanent. A report found by
    /// `Message-ID` alone must be about the row's own contact (its final or original recipient), so that a forged report quoting an alert's id cannot mark
    /// another address dead. A permanent report carries the class of its deciding block
    /// (`BounceClass`): what it changes beyond the row is the store's to do by that class.
    package static func decide(_ report: BounceReport, key: Key, delivery: BounceStore.Delivery?) -> Decision {
        switch key {
        case .canary(let id): return .canaryBack(id: id)
        case .forgedCanary: return .unmatched(.forgedTag)
        case .canaryReport, .tag, .messageID, .forged, .nothing: break
        }
        switch report.verdict {
        case .autoReply: return .setAside(.autoReply)
        case .unparsed: return .setAside(.unparsed)
        case .tooLarge: return .setAside(.tooLarge)
        case .permanent, .transient, .complaint, .delivered: break
        }
        if case .canaryReport(let id) = key {
            // A delay or a success says nothing yet: CANARY_WITHIN decides.
            return report.verdict == .permanent ? .canaryBounced(id: id, status: report.decidingRecipient?.status) : .remove
        }
        switch key {
        case .forged: return .unmatched(.forgedTag)
        case .nothing: return .unmatched(.noKey)
        case .tag, .messageID, .canary, .canaryReport, .forgedCanary: break
        }
        guard let delivery else { return .unmatched(.unknownRow) }
        guard DeliveryJob.Channel(rawValue: delivery.channel)?.bounces == true else { return .unmatched(.notMail) }
        if case .messageID = key, report.verdict != .complaint, !delivery.contact.isEmpty {
            let named = report.recipients.flatMap { [$0.finalRecipient, $0.originalRecipient] }.compactMap { $0?.lowercased() }
            guard named.contains(delivery.contact) else { return .unmatched(.otherRecipient) }
        }
        switch report.verdict {
        case .permanent: return .bounce(delivery, report.decidingRecipient?.bounceClass ?? .other)
        case .transient: return .note(.transient, delivery)
        case .complaint: return .note(.complaint, delivery)
        default: return .remove
        }
    }
}

