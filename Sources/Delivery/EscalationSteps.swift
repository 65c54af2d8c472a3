import Config
import Foundation
import Logging
import Rule
import Store
import Systemd
import Values

/// The escalation's steps made (docs/escalation.md): the streaks due a step are read (one index
/// probe, nothing when nothing is due), `EscalationRule` says what each needs, and this records
/// it — with the recipients the rule chose, which are the ones sent to. The messages a step owes
/// follow from the record (`LifecycleStore.dueStreakNotices`), sent by
/// the same run or pass right after, claimed and retried like every other message. Each move is
/// made only from the stage before it, so of two daemons one makes it; a step due while the daemon
/// was down is made at its first pass.
package struct EscalationSteps: Sendable {
    /// `ESCALATE_AFTER`.
    package let rule: EscalationRule
    /// Where the steps are reported.
    package let logger: Logger

    /// The most streaks one pass moves: a backlog (a long downtime) is worked through a batch a pass.
    static let batch = 1000

    /// What one pass recorded.
    package struct Taken: Sendable, Equatable {
        /// Streaks escalated now.
        package var escalated = 0
        /// Streaks declared unheard now.
        package var unheard = 0
        /// Streaks found heard or closed, never looked at again.
        package var settled = 0
    }

    /// The steps for `configuration` (nil when `ESCALATE_AFTER` is 0: escalation off).
    package init?(_ configuration: NotifierConfiguration, logger: Logger) {
        guard let after = configuration.escalateAfter else { return nil }
        rule = EscalationRule(after: after)
        self.logger = logger
    }

    /// Makes the steps due at `now`. Idempotent: a step already made by another daemon (or by an
    /// earlier attempt of this one) is not made again.
    @discardableResult
    package func take(_ db: PGConnection, now: Date) throws -> Taken {
        var taken = Taken()
        for streak in try EscalationStore.due(db, before: now.addingTimeInterval(-rule.seconds), limit: Self.batch) {
            let fields: Logger.Metadata = ["user_id": "\(streak.userID)", "alert_date": "\(streak.alertDate)"]
            switch rule.step(streak.facts, now: now) {
            case .wait:
                continue
            case .settled(.unheard):
                continue
            case .settled(let why):
                if try EscalationStore.settle(db, userID: streak.userID, alertDate: streak.alertDate, closed: why == .reportedOK, at: now) {
                    taken.settled += 1
                }
            case .escalate(let escalation):
                guard try EscalationStore.escalate(db, userID: streak.userID, alertDate: streak.alertDate, at: now,
                                                   notices: escalation.notices, firstAlerts: escalation.firstAlerts) else { continue }
                taken.escalated += 1
                let counts = "\(escalation.notices.count) first-tier notice(s), \(escalation.firstAlerts.count) second-tier alert(s)"
                logger.warning("alert of \(streak.alertDate) for user \(streak.userID) not heard: escalated (\(escalation.cause.rawValue)), \(counts)",
                               metadata: NotifierEvent.escalated.metadata.merging(fields.merging([
                                   "escalation_cause": "\(escalation.cause.rawValue)", "notices": "\(escalation.notices.count)",
                                   "first_alerts": "\(escalation.firstAlerts.count)",
                               ]) { $1 }) { $1 })
            case .unheard(let cause):
                guard try EscalationStore.declareUnheard(db, userID: streak.userID, alertDate: streak.alertDate, at: now) else { continue }
                taken.unheard += 1
                logger.critical("alert of \(streak.alertDate) for user \(streak.userID) unheard: nobody answered after the escalation",
                                metadata: NotifierEvent.unheard.metadata.merging(fields.merging(["escalation_cause": "\(cause.rawValue)"]) { $1 }) { $1 })
            }
        }
        return taken
    }
}
