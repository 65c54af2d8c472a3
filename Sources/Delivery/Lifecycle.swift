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

    /// How far back the all-clear sweep looks for accepted alerts whose user checked in since:
    /// the alerts of today and yesterday (an alert accepted after the check-in came; the
    /// check-in trigger's queue covers every other streak, whenever it ended).
    package var sweepStart: CalendarDate { Self.sweepStart(runDate: runDate) }

    /// `sweepStart` for `runDate`.
    package static func sweepStart(runDate: CalendarDate) -> CalendarDate { runDate.adding(days: -1) }

    /// The jobs of `kinds` due now (only of `onlyUsers` when given), each validated: a row whose
    /// name or address is no longer usable is left out and logged (and an introduction to such an
    /// address is marked `not_introduced`).
    package func jobs(_ db: PGConnection, kinds: Set<DeliveryJob.Kind>, onlyUsers: Set<String>? = nil) throws -> [DeliveryJob] {
        let store = LifecycleStore(claimLeaseSeconds: configuration.claimLeaseSeconds)
        let only = onlyUsers.map { Array($0) }
        var due: [LifecycleStore.Due] = []
        if kinds.contains(.introduction) {
            if configuration.introduceContacts {
                due += try store.dueIntroductions(db, runDate: runDate, onlyUsers: only)
            } else if onlyUsers == nil {
                try store.skipIntroductions(db)
            }
        }
        if kinds.contains(.alert) {
            due += try store.unfinishedAlerts(db, runDate: runDate, oldest: runDate.adding(days: -configuration.rule.catchUpDays),
                                              onlyUsers: only)
        }
        if kinds.contains(.allClear) {
            due += try store.dueAllClears(db, windowStart: sweepStart, latestTrusted: runDate.adding(days: 1), onlyUsers: only)
        }
        if kinds.contains(.followUp) {
            due += try store.dueFollowUps(db, runDate: runDate, days: configuration.followUpDays,
                                          catchUpDays: configuration.rule.catchUpDays, onlyUsers: only)
        }
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
