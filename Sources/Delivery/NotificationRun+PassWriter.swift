import Foundation
import Logging
import Store
import Systemd

extension NotificationRun.Steps {
    /// Records and announces the skips a run's first pass hands over in batches as it finds them
    /// (`RunPlan.read`'s `skipped`), so that the run holds one batch of them, not the day's: at
    /// ten million users of the benchmark's model, ~67,000 skips would be ~45 MB. And records the
    /// intake guard's new holds the same way (`held`): an outage of the app holds every user's
    /// alert in one run — ten million holds at ten million users.
    ///
    /// The first pass reads in a read-only snapshot on the run's connection, so the batches are
    /// written on a session of their own, opened at the first full batch (a run with fewer skips
    /// opens none: the plan brings them back and the run records them on its connection) and
    /// closed — given back to the daemon's keeper — when the first pass ends, before the recorder
    /// and the senders open theirs: the run holds no more sessions at once than before. Should no
    /// session come (a pooler's pool full), the plan keeps the later skips and the run records them
    /// after the first pass, as before. The holds are announced once, after the first pass
    /// (`announce(_:)` of the plan), with when the first of them goes out (`heldUntil`).
    final class PassWriter {
        private let steps: NotificationRun.Steps
        private let control: RunControl
        private var db: ReconnectingConnection?
        /// No session came: the plan keeps the skips.
        private var refused = false
        /// When the earliest of the holds recorded so far goes out.
        private(set) var heldUntil: Date?
        /// How many new holds it was handed.
        private(set) var holdsHandedOver = 0

        init(_ steps: NotificationRun.Steps, control: RunControl) {
            self.steps = steps
            self.control = control
        }

        /// Records `batch` in `notification_logs` (again after a broken connection: the insert
        /// leaves recorded rows alone), then announces each skip; false when no session came.
        func write(_ batch: [SkippedUser]) throws -> Bool {
            guard let db = try session() else { return false }
            try db.perform { try steps.store.recordSkips($0, batch, runDate: steps.run.runDate, runID: steps.id) }
            steps.announce(batch)
            return true
        }

        /// Records `holds` in `held_alerts` (again after a broken connection: a streak held keeps
        /// its first hold); false when no session came.
        func write(_ holds: [HoldStore.NewHold]) throws -> Bool {
            guard let db = try session() else { return false }
            let run = steps.run
            if let release = try db.perform({ try HoldStore.record($0, holds, runDate: run.runDate,
                                                                   hours: run.configuration.intakeGuard.holdHours) }) {
                heldUntil = min(heldUntil ?? release, release)
            }
            holdsHandedOver += holds.count
            return true
        }

        /// The first pass ended: the session is closed, or goes back to the keeper.
        func close() {
            db = nil
        }

        private func session() throws -> ReconnectingConnection? {
            if let db { return db }
            guard !refused else { return nil }
            let run = steps.run
            do {
                let db = try ReconnectingConnection(
                    run.configuration.databaseURL, schema: run.configuration.databaseSchema, applicationName: "sileme-notifier (skips)",
                    patience: run.configuration.databaseReconnectSeconds, onRetry: Dispatcher.reconnectNotice(run.logger),
                    onWait: { [control] in control.alive() }, stop: control.stop, keeper: run.sessions)
                self.db = db
                return db
            } catch let error as DatabaseError where error.sessionWait {
                refused = true
                run.logger.warning("no database session for recording the skips and holds as they are found (\(error.message)); the run records them after its first pass",
                                   metadata: steps.base)
                return nil
            }
        }
    }

    /// Each skipped user (or contact) in the journal: `notification_skipped`, at `warning`.
    func announce(_ skips: [SkippedUser]) {
        for skip in skips {
            var fields: Logger.Metadata = [
                "user_id": "\(skip.userID)", "miss_days": "\(skip.missedDays)",
                "skip_reason": "\(skip.decision.rawValue)", "detail": "\(skip.reason)",
            ]
            if let newer = skip.newerAccount { fields["newer_user_id"] = "\(newer)" }
            run.logger.warning("notification skipped for user \(skip.userID): \(skip.reason)",
                               metadata: base.merging(NotifierEvent.notificationSkipped.metadata) { $1 }.merging(fields) { $1 })
        }
    }
}
