import Config
import Foundation
import Logging
import Rule
import Store
import Systemd
import Values
import Webhook

extension NotificationRun {
    /// The steps of a real run around its plan and its delivery: each a write (or the journal),
    /// named, on the run's own connection.
    struct Steps {
        let run: NotificationRun
        /// The run's first connection: reconnected when it breaks (`DATABASE_RECONNECT_SECONDS`).
        let db: ReconnectingConnection
        /// Claims as this run (`claimed_by`).
        let store: NotificationStore
        /// `notifier_runs.id`.
        let id: Int64
        /// The fields every event of the run carries.
        let base: Logger.Metadata

        /// A store that claims as a new owner: this run's own (the claim takes its own rows over
        /// after a broken connection).
        static func newStore(_ run: NotificationRun) -> NotificationStore {
            NotificationStore(owner: "\(run.host):\(ProcessInfo.processInfo.processIdentifier):\(UUID().uuidString.prefix(8).lowercased())",
                              claimLeaseSeconds: run.configuration.claimLeaseSeconds)
        }

        /// Opens the run's connection, refuses rows hidden by row security (they would look like
        /// nobody being due: exit 78), inserts the `running` row and logs `run_started` (`joining`:
        /// the run whose sending this one joins).
        static func begin(_ run: NotificationRun, control: RunControl, joining: Int64? = nil) throws -> Steps {
            let configuration = run.configuration
            // After `startRun` (not retried: it inserts), every statement on this connection may
            // run twice, so a broken connection is reconnected.
            let db = try ReconnectingConnection(
                configuration.databaseURL, schema: configuration.databaseSchema, patience: configuration.databaseReconnectSeconds,
                onRetry: Dispatcher.reconnectNotice(run.logger), onWait: { control.alive() }, stop: control.stop,
                keeper: run.sessions)
            let store = newStore(run)
            try db.perform { try RowSecurity.verify($0) }
            try db.perform { try CheckInTriggers.verify($0) }
            let id = try db.perform(retrying: false) { try store.startRun($0, runDate: run.runDate, mode: run.mode, host: run.host,
                                                                              slots: run.scope.slots, joining: joining) }
            var base: Logger.Metadata = ["run_date": "\(run.runDate)", "run_mode": "\(run.mode.rawValue)", "run_id": "\(id)"]
            if let joining { base["joined_run_id"] = "\(joining)" }
            let slots = run.scope.slots.map { " for the users of \($0.count) of the users' own times" } ?? ""
            let joined = joining.map { ", joining the sending of run \($0)" } ?? ""
            run.logger.info("run started for \(run.runDate) (\(run.mode.rawValue))\(slots)\(joined)", metadata: base.merging(NotifierEvent.runStarted.metadata) { $1 }.merging([
                "threshold_days": "\(configuration.rule.thresholdDays)", "time_zone": "\(configuration.timeZone.identifier)",
                "notifier_version": "\(NotifierVersion.current)",
            ]) { $1 }.merging(run.scope.slots.map { ["slots": "\($0.joined(separator: ","))"] } ?? [:]) { $1 })
            return Steps(run: run, db: db, store: store, id: id, base: base)
        }

        /// `retry`: the failed mails of `users` still due are due again now (the claim takes them).
        func releaseForRetry(_ db: PGConnection, users: Set<String>) throws {
            try store.releaseForRetry(db, userIDs: Array(users), runDate: run.runDate, kinds: Array(run.scope.kinds))
        }

        /// Writes down what the plan decided that is not a message: the skipped users it brought
        /// back (the first pass records larger numbers in batches as it finds them: `PassWriter`), and the
        /// introductions the run does not make (pairs no longer in force or unusable, or every
        /// pending one with `INTRODUCE_CONTACTS=off`).
        ///
        /// And the intake guard's new holds the plan brought back (docs/intake-hold.md; those it
        /// handed over are recorded: `PassWriter`): the plan comes back with when its first held
        /// alert goes out.
        func record(_ db: PGConnection, _ plan: RunPlan) throws -> RunPlan {
            var plan = plan
            if let release = try HoldStore.record(db, plan.newHolds, runDate: run.runDate, hours: run.configuration.intakeGuard.holdHours) {
                plan.heldUntil = min(plan.heldUntil ?? release, release)
            }
            try store.recordSkips(db, plan.skips, runDate: run.runDate, runID: id)
            if run.scope.kinds.contains(.introduction) {
                try LifecycleStore(claimLeaseSeconds: run.configuration.claimLeaseSeconds)
                    .settleIntroductions(db, introduceContacts: run.configuration.introduceContacts, wholeDay: run.scope.isWholeDay,
                                         unusable: plan.unusableIntroductions)
            }
            return plan
        }

        /// The plan's warnings in the journal: each skipped user the first pass brought back (those
        /// it handed over in batches are announced as they were recorded: `PassWriter`, before
        /// these), alerts held (at `crit`: the operator decides), future-dated check-ins ignored.
        func announce(_ plan: RunPlan) {
            let logger = run.logger
            announce(plan.skips)
            if plan.newHeld > 0 { announceHolds(plan) }
            if plan.tally.futureIgnored > 0 {
                logger.warning("\(plan.tally.futureIgnored) user(s) have check-ins dated after \(run.runDate.adding(days: 1)); the rule ignores them (a wrong device clock)",
                               metadata: base.merging(NotifierEvent.futureCheckInsIgnored.metadata) { $1 }.merging([
                    "future_ignored": "\(plan.tally.futureIgnored)"]) { $1 })
            }
        }

        /// New holds (docs/intake-hold.md), at once: the journal at `crit` and, with the webhook
        /// on, `notifier.alerts_held` (one attempt: the journal is the record). Only when this
        /// run held alerts first — the later runs that find them still held say it in
        /// `run_finished`'s `held`.
        private func announceHolds(_ plan: RunPlan) {
            let gapDays = plan.heldGapDays.sorted()
            let gaps = gapDays.map(\.description).joined(separator: ",")
            let releaseAt = plan.heldUntil ?? Date().addingTimeInterval(run.configuration.intakeGuard.holdHours * 3600)
            let release = CalendarDate.rfc3339(releaseAt)
            run.logger.critical("\(plan.tally.held) alert(s) held: their missed days include an intake gap (\(gaps)), a day on which far fewer users checked in than usual, as when the app is down; they go out at \(release) unless a check-in ends the streak first, or at once with `sileme-notifier release`",
                                metadata: base.merging(NotifierEvent.alertsHeld.metadata) { $1 }.merging([
                                    "held": "\(plan.tally.held)", "gap_days": "\(gaps)", "release_at": "\(release)",
                                ]) { $1 })
            guard let settings = run.configuration.webhook, settings.sends(.alertsHeld) else { return }
            do {
                let event = try WebhookEvent.alertsHeld(id: "held_\(id)", timestamp: Date(),
                                                        held: .init(runDate: run.runDate, count: plan.tally.held, gapDays: gapDays, releaseAt: releaseAt))
                let template = try settings.bodyTemplate.map { try WebhookBodyTemplate($0, appName: run.configuration.appName) }
                let outcome = try WebhookTransport(settings: settings).send(event, using: template)
                if case .delivered = outcome { return }
                run.logger.error("webhook \(WebhookEventType.alertsHeld.rawValue) not delivered: \(outcome.reason)", metadata: base)
            } catch {
                run.logger.error("webhook \(WebhookEventType.alertsHeld.rawValue) not sent: \(error)", metadata: base)
            }
        }

        /// After the sends: the settle step's write (`Settle`). It may not fail the run.
        func settle() {
            let settle = Settle(run: run, store: store)
            // A run that sends no all-clears (the daemon's at an instant of some slots only)
            // leaves their queue to the all-clear pass, which settles it after each pass.
            guard settle.settlesQueue else { return }
            _ = try? db.perform { try settle.allClearQueue($0) }
        }

        /// The settle step after a delivery, a statement on a session the caller gives: a run
        /// makes it on its reconnecting connection and does not let it fail the run (`settle()`);
        /// the daemon's all-clear pass on its one session, failing on it (and the next pass
        /// settles again). (The accepted contacts are marked `ok` during the sends, by the
        /// recorder: `ResultRecorder`.)
        struct Settle {
            /// The run (or the all-clear pass) whose delivery is settled.
            let run: NotificationRun
            /// The store the delivery claimed with.
            let store: NotificationStore

            /// Whether the run sends all-clears, and so settles their queue.
            var settlesQueue: Bool { run.scope.kinds.contains(.allClear) }

            /// The all-clear queue drops the users whose all-clears are all settled.
            func allClearQueue(_ db: PGConnection) throws {
                _ = try LifecycleStore(claimLeaseSeconds: run.configuration.claimLeaseSeconds)
                    .settleAllClearQueue(db, channels: run.configuration.channels(for: .allClear))
            }
        }

        /// Reports the run from its tally: the `notifier_runs` row, the metrics file and the
        /// journal's `run_finished`. The row is written on the run's first connection; if that is
        /// gone too, the journal is the record (and the row stays `running`).
        func report(_ delivery: DeliveryResult) -> RunResult {
            var errors = delivery.errors
            if delivery.notStarted > 0 { errors.append(RunInterrupted(remaining: delivery.notStarted)) }
            let tally = delivery.tally
            let result = RunResult(runID: id, counts: tally, errors: errors.map { "\($0)" },
                                   databaseLost: errors.contains { ($0 as? DatabaseError)?.kind == .unreachable },
                                   mailServerUnavailable: tally.serverUnavailable > 0 && tally.sent == 0)
            try? db.perform { try store.finishRun($0, id: id, tally: tally, error: result.errors.first) }
            try? db.perform { MetricsFile.update(run.configuration, $0, logger: run.logger) }
            run.logger.log(level: result.errors.isEmpty && tally.failed == 0 ? .notice : .error, summary(result),
                           metadata: base.merging(NotifierEvent.runFinished.metadata) { $1 }.merging(fields(result)) { $1 })
            return result
        }

        /// `run finished for D: 4 sent (alerts 3, 1 all_clear), 0 failed, 1 skipped, …`.
        private func summary(_ result: RunResult) -> Logger.Message {
            let tally = result.counts
            let gone = tally.gone > 0 ? ", \(tally.gone) deleted during the run" : ""
            let errorText = result.errors.first.map { "; error: \($0)" } ?? ""
            let guards = tally.guardsText.map { ", " + $0 } ?? ""
            let held = tally.held > 0 ? ", \(tally.held) held over an intake gap" : ""
            let others = DeliveryJob.Kind.allCases.filter { $0 != .alert }.compactMap { kind in
                tally.sentToContacts(kind).map { "\($0) \(kind.rawValue)" }
            }
            let lifecycle = others.isEmpty ? "" : " (alerts \(tally.sentToContacts(.alert) ?? 0), " + others.joined(separator: ", ") + ")"
            // The app's channels that are on: their events' counts.
            let apps = DeliveryJob.Channel.of(.app).filter { channel in
                DeliveryJob.Kind.allCases.contains { run.configuration.channels(for: $0).contains(channel) }
            }
            let webhook = apps.map { "; \($0.rawValue) events: \(tally.sent(on: $0)) delivered, \(tally.failed(on: $0)) failed" }.joined()
            return "run finished for \(run.runDate): \(tally.sent) sent\(lifecycle), \(tally.failed) failed, \(tally.skipped) skipped, \(tally.alreadyNotified) already notified, \(tally.stale) stale\(held)\(guards)\(gone)\(webhook)\(errorText)"
        }

        /// `run_finished`'s fields: every count of `RunTally.fields`, `sent_<kind>` and
        /// `failed_<kind>` for every kind (0 included) to contacts, `sent_<channel>` and
        /// `failed_<channel>` for each app's channel, and the exit status.
        private func fields(_ result: RunResult) -> Logger.Metadata {
            let tally = result.counts
            var fields: Logger.Metadata = ["exit_status": "\(result.exitStatus.rawValue)"]
            for (name, value) in tally.byName { fields[name] = "\(value)" }
            for kind in DeliveryJob.Kind.allCases {
                fields["sent_\(kind.rawValue)"] = "\(tally.sentToContacts(kind) ?? 0)"
                fields["failed_\(kind.rawValue)"] = "\(tally.failedToContacts(kind) ?? 0)"
            }
            for channel in DeliveryJob.Channel.of(.app) {
                fields["sent_\(channel.rawValue)"] = "\(tally.sent(on: channel))"
                fields["failed_\(channel.rawValue)"] = "\(tally.failed(on: channel))"
            }
            return fields
        }
    }
}
