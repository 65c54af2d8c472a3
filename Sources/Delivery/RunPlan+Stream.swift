import Config
import Logging
import Rule
import Store
import Values

extension RunPlan {
    /// The rule's part of a plan of `scope` read again, for a run that sends as it reads: every
    /// listed user's messages go to `emit` as the batch query streams them, and nothing is kept
    /// but the decisions' counts and the intake guard's new holds (users newly due since the
    /// first pass: the first pass recorded its own, which this one finds recorded). A run's first
    /// pass (`read` keeping no jobs) has counted, recorded and announced everything else before
    /// the first message: this pass only feeds the senders, so that a run holds the messages in
    /// flight, not every message of the day. `alerts` false: the rule is not read again (the first
    /// pass found no alert to send). With `owed`, the lifecycle's messages a first pass
    /// read with `streamsOwed` counted follow the alerts, a page at a time, in the same snapshot
    /// (one taken before the first alert went out, as the first pass's was: this run's own
    /// alerts are not in it); those the first pass left out are not logged again. In a read-only
    /// snapshot of its own; never writes.
    package static func stream(_ db: PGConnection, configuration: NotifierConfiguration, runDate: CalendarDate, scope: Scope,
                               alerts: Bool = true, owed: Bool = false, emit: ([DeliveryJob]) throws -> Void) throws -> RunPlan {
        var plan = RunPlan()
        let alerts = alerts && scope.evaluatesRule && scope.kinds.contains(.alert)
        guard alerts || owed else { return plan }
        try db.transaction(readOnly: true, oneSnapshot: true) {
            if alerts {
                try plan.evaluate(db, configuration: configuration, runDate: runDate, scope: scope, includeStale: false, counts: false,
                                  keepsSkips: false, control: nil, each: { _, _ in }, emit: emit)
            }
            if owed && scope.readsTheRest {
                let quiet = Logger(label: "sileme-notifier.plan") { _ in SwiftLogNoOpLogHandler() }
                plan.owedLater = try Lifecycle(configuration: configuration, runDate: runDate, logger: quiet)
                    .stream(db, kinds: owedNow(scope.kinds).later, onlyUsers: scope.users, slots: scope.slots, each: emit)
            }
        }
        return plan
    }
}
