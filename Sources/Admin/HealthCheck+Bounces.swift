import Config
import Delivery
import Foundation
import Store
import Values

extension HealthCheck.Part {
    /// `bounce mailbox` (docs/bounces.md): a real listing through the reader's code — the
    /// mailbox, its TLS and its password (exit 69 if it cannot be read) — and when a daemon last
    /// read it, from the reader's record read over the database's session.
    static let bounceMailbox = Self(when: { $0.bounce != nil }, read: { db, context in
        context.bounceRecord = Result { try BounceStore.mailboxRecord(db) }
        return []
    }, lines: { context in
        guard let bounce = context.configuration.bounce else { return [] }
        let listing = Result { try BounceReader.probe(bounce) }
        return [HealthCheck.bounceMailbox(bounce, listing: listing, record: context.bounceRecord, now: Date())]
    })
}

extension HealthCheck {
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
}
