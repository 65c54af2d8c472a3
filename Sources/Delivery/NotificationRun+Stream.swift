import Foundation
import Rule
import Store
import Values

extension NotificationRun.Steps {
    /// Delivers `plan` — read by a first pass that kept no alert: its counts, skips and holds are
    /// recorded and announced — with the rule's alerts read again by a second pass
    /// (`RunPlan.stream`) on the run's connection while the senders send, through a bounded
    /// `Dispatcher.Feed`: the introductions first, then the alerts as they are read, then the
    /// lifecycle's other messages — read by the same pass after the alerts, a page at a time,
    /// when the first pass counted some (`RunPlan.owedLater`) — as a plan orders them. What the
    /// run holds is the messages in flight, not the day's: at ten million users a day's alerts
    /// would be a quarter of a gigabyte, and the all-clears after a long stop ~1.9 KB each. A
    /// message read by the second pass that the first did not list (the user's data changed in
    /// between) goes out like any other — each claim checks it is still due.
    ///
    /// The second pass is not read again after a broken connection (the alerts it fed may be on
    /// their way: a second stream would hand them to the senders twice); what it had not read
    /// stays due for the next run, and its error is the run's.
    func deliver(_ plan: RunPlan, through dispatcher: Dispatcher) -> DeliveryResult {
        guard plan.ruleJobs + plan.owedLater > 0 else { return dispatcher.deliver(plan.jobs, into: plan.tally) }
        let (connection, run) = (Transfer(value: db), run)
        var (delivery, read) = dispatcher.deliver(first: plan.jobs.filter { $0.kind == .introduction },
                                                  streaming: plan.ruleJobs + plan.owedLater,
                                                  then: plan.jobs.filter { $0.kind != .introduction }, into: plan.tally) { put in
            try connection.value.perform(retrying: false) { db in
                try RunPlan.stream(db, configuration: run.configuration, runDate: run.runDate, scope: run.scope,
                                   alerts: plan.ruleJobs > 0, owed: plan.owedLater > 0, emit: put)
            }
        }
        do {
            let streamed = try read.get()
            // Users another run notified between the two passes: the first counted them due, the
            // second found them notified and fed nothing — counted as already notified, as a run
            // that looked later would have counted them.
            let notifiedMeanwhile = streamed.tally.alreadyNotified - plan.tally.alreadyNotified
            if notifiedMeanwhile > 0 {
                delivery.tally.alreadyNotified += notifiedMeanwhile
                delivery.tally.due = max(0, delivery.tally.due - notifiedMeanwhile)
            }
            // Holds of users newly due since the first pass (it recorded its own before sending).
            if !streamed.newHolds.isEmpty {
                _ = try db.perform { try HoldStore.record($0, streamed.newHolds, runDate: run.runDate,
                                                          hours: run.configuration.intakeGuard.holdHours) }
            }
        } catch is Dispatcher.Feed.Closed {
            // The senders stopped first: their result says why.
        } catch {
            delivery.errors.append(error)
        }
        return delivery
    }
}
