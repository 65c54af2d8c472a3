import Config
import Foundation
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

    /// The jobs of `kinds` due now (only of `onlyUsers` when given), each validated: a row whose
    /// name or address is no longer usable is left out and logged (and an introduction to such an
    /// address is marked `not_introduced`).
    package func jobs(_ db: PGConnection, kinds: Set<DeliveryJob.Kind>, onlyUsers: Set<String>? = nil) throws -> [DeliveryJob] {
        let store = LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
        let due = try store.due(db, configuration: configuration, runDate: runDate, kinds: kinds, onlyUsers: onlyUsers.map { Array($0) })
        var jobs: [DeliveryJob] = []
        var unusable: [(user: String, contact: String)] = []
        for row in due {
            let name = try? DisplayName(cleaning: row.rawName ?? "")
            let address = try? EmailAddress(validating: row.contact)
            guard let name, let address else {
                logger.warning("\(row.kind.rawValue) for user \(row.userID) not sent: \(name == nil ? "the name is empty after cleaning" : "the contact is not a valid address")",
                               metadata: NotifierEvent.notificationSkipped.metadata.merging([
                                "run_date": "\(runDate)", "user_id": "\(row.userID)", "notification_kind": "\(row.kind.rawValue)",
                                "skip_reason": "\(name == nil ? "invalid_name" : "invalid_email")",
                               ]) { $1 })
                if row.kind == .introduction { unusable.append((row.userID, row.contact.lowercased())) }
                continue
            }
            jobs.append(DeliveryJob(kind: row.kind, userID: row.userID, name: name, email: address, position: row.position,
                                    notificationDate: row.notificationDate, missedDays: row.missedDays,
                                    lastCheckIn: row.lastCheckIn, inReplyTo: row.inReplyTo, checkedIn: row.checkedIn))
        }
        try store.markNotIntroduced(db, unusable)
        return jobs
    }
}
