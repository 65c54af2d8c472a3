import Config
import Foundation
import Hashing
import Logging
import Rule
import Store
import Systemd
import Values

/// The messages a run owes besides the rule's new alerts (docs/lifecycle.md): all-clears,
/// follow-ups (`FOLLOW_UP_DAYS`), introductions (`INTRODUCE_CONTACTS`), and the unfinished alerts
/// of users already notified through another contact — read from the database as due rows and
/// turned into delivery jobs.
package struct Lifecycle: Sendable {
    /// The configuration in force.
    package let configuration: NotifierConfiguration
    /// `D`.
    package let runDate: CalendarDate
    /// Where problems go.
    package let logger: Logger

    /// The messages of `kinds` the database owes now (only of `onlyUsers` when given; those at
    /// the user's slot only of the users of `slots` when given), as read — or, with `pages`,
    /// handed to it `page` rows at a time as they are read, and none returned.
    package func owed(_ db: PGConnection, kinds: Set<DeliveryJob.Kind>, onlyUsers: Set<String>? = nil,
                      slots: [String]? = nil, pages: (([LifecycleStore.Due]) throws -> Void)? = nil) throws -> [LifecycleStore.Due] {
        try withoutActuallyEscaping(pages ?? { _ in }) { each in
            try LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds,
                               pages: pages == nil ? nil : LifecycleStore.Pages(size: Self.page, each: each))
                .due(db, messages: configuration.messages, runDate: runDate, kinds: kinds, onlyUsers: onlyUsers.map { Array($0) },
                     slots: slots)
        }
    }

    /// The messages of `kinds` the database owes now (as `owed`), as jobs (as `jobs`), handed to
    /// `each` a page of `page` rows at a time as they are read: what is held is a page, however
    /// many are owed. Each delivery key once over all the pages. Returns how many jobs went to
    /// `each`. Reads only, in one transaction (the caller's, when one is open).
    @discardableResult
    package func stream(_ db: PGConnection, kinds: Set<DeliveryJob.Kind>, onlyUsers: Set<String>? = nil, slots: [String]? = nil,
                        page: Int = Lifecycle.page, each: ([DeliveryJob]) throws -> Void) throws -> Int {
        var keys = SeenKeys()
        var count = 0
        try withoutActuallyEscaping(each) { each in
            let pages = LifecycleStore.Pages(size: page) { due in
                let jobs = try self.jobs(db, owed: due).jobs.filter { keys.insert(Dispatcher.key($0, runDate: runDate)) }
                count += jobs.count
                if !jobs.isEmpty { try each(jobs) }
            }
            _ = try LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds, pages: pages)
                .due(db, messages: configuration.messages, runDate: runDate, kinds: kinds, onlyUsers: onlyUsers.map { Array($0) },
                     slots: slots)
        }
        return count
    }

    /// The rows a page of `stream` holds at most.
    package static let page = 500

    /// The delivery keys a stream has handed on, each kept as the first 16 bytes of its SHA-256:
    /// ~25 bytes a message, where the key's text in a set is ~150 (measured: 440 bytes a message
    /// over a run's two passes, at 50,000 all-clears). Two different keys share 128 bits of digest
    /// with a chance of 2^-128 a pair: among a million messages, 2^-89 — never, in effect, where a
    /// false match would leave a message out.
    struct SeenKeys {
        private struct Digest: Hashable { var high: UInt64, low: UInt64 }
        private var seen = Set<Digest>()

        /// Whether `key` is new (and now seen).
        mutating func insert(_ key: String) -> Bool {
            let bytes = SHA256.digest(Array(key.utf8))
            func word(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
            return seen.insert(Digest(high: word(0), low: word(8))).inserted
        }
    }

    /// The owed messages `due` as jobs, each validated: a row whose name or address is no longer
    /// usable is left out and logged (an introduction to such an address comes back in
    /// `unusable`, for the run to record as not introduced). An app's event lists the user's
    /// valid contacts as they are now; one about a user with no valid contact left is left out
    /// and logged. Each delivery key comes once (an event's retry may be found by two queries).
    /// Reads only.
    package func jobs(_ db: PGConnection, owed due: [LifecycleStore.Due]) throws
        -> (jobs: [DeliveryJob], unusable: [(user: String, contact: String)]) {
        let store = LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
        let hooked = due.filter { $0.channel.audience == .app }.map(\.userID)
        let contacts = try store.contacts(db, of: hooked).mapValues { MissRule.validate($0).valid }
        // Where each contact stands in an escalated streak, for the events that list it.
        let streaks = try EscalationStore.contacts(db, of: due.compactMap { row in
            row.channel.audience == .app && Self.listsStreak(row.kind) ? row.notificationDate.map { (row.userID, $0) } : nil
        })
        // The languages of the mails' readers (docs/languages.md).
        let languages = try store.languages(db, of: due.map(\.userID))
        var jobs: [DeliveryJob] = []
        var keys = Set<String>()
        var unusable: [(user: String, contact: String)] = []
        for row in due {
            let name = try? DisplayName(cleaning: row.rawName ?? "")
            let known = contacts[row.userID] ?? []
            // An app's event about the user names its first contact; every other row, its own.
            let aboutUser = row.channel.audience == .app && !row.kind.keyedByContact
            let address = aboutUser ? known.first?.address : try? EmailAddress(validating: row.contact)
            guard let name, let address else {
                let why = name == nil ? "the name is empty after cleaning"
                    : aboutUser ? "the user has no valid contact" : "the contact is not a valid address"
                logger.warning("\(row.kind.rawValue) (\(row.channel.rawValue)) for user \(row.userID) not sent: \(why)",
                               metadata: NotifierEvent.notificationSkipped.metadata.merging([
                                "run_date": "\(runDate)", "user_id": "\(row.userID)", "notification_kind": "\(row.kind.rawValue)",
                                "notification_channel": "\(row.channel.rawValue)",
                                "skip_reason": "\(name == nil ? "invalid_name" : "invalid_email")",
                               ]) { $1 })
                if row.kind == .introduction && row.channel.audience == .contacts { unusable.append((row.userID, row.contact.lowercased())) }
                continue
            }
            var job = DeliveryJob(kind: row.kind, channel: row.channel, userID: row.userID, name: name, email: address,
                                  position: row.position, contacts: row.channel.audience == .app ? known : [],
                                  notificationDate: row.notificationDate, missedDays: row.missedDays,
                                  lastCheckIn: row.lastCheckIn, pausedUntil: row.pausedUntil, inReplyTo: row.inReplyTo,
                                  checkedIn: row.checkedIn, acknowledgement: row.acknowledgement, outcome: row.outcome,
                                  bounce: row.bounce)
            if let named = languages[row.userID] {
                job.languages = .init(contact: row.channel.audience == .contacts ? named.contacts[row.contact.lowercased()] : nil,
                                      user: named.user)
            }
            if row.channel.audience == .app, Self.listsStreak(row.kind), let date = row.notificationDate {
                job.streakContacts = streaks[EscalationStore.streakKey(userID: row.userID, alertDate: date)] ?? []
            }
            if keys.insert(Dispatcher.key(job, runDate: runDate)).inserted { jobs.append(job) }
        }
        return (jobs, unusable)
    }

    /// Whether the app's event of `kind` lists where each contact stands in the streak.
    static func listsStreak(_ kind: DeliveryJob.Kind) -> Bool { kind == .escalation || kind == .unheard }
}
