import Config
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
    /// flight, not every message of the day. In a read-only snapshot of its own; never writes.
    package static func stream(_ db: PGConnection, configuration: NotifierConfiguration, runDate: CalendarDate, scope: Scope,
                               emit: ([DeliveryJob]) throws -> Void) throws -> RunPlan {
        var plan = RunPlan()
        guard scope.evaluatesRule, scope.kinds.contains(.alert) else { return plan }
        try db.transaction(readOnly: true, oneSnapshot: true) {
            try plan.evaluate(db, configuration: configuration, runDate: runDate, scope: scope, includeStale: false, counts: false,
                              keepsSkips: false, control: nil, each: { _, _ in }, emit: emit)
        }
        return plan
    }
}
