import Config
import Foundation
import Rule
import Store
import Values

extension RunPlan {
    /// The intake guard as a plan applies it (docs/intake-hold.md): the gap days among the run
    /// date's possible missed days, read once per plan (a few rows of `daily_intake` a zone), each
    /// judged where it is over when the plan is read (`IntakeGuard.Intake`), and the
    /// recorded holds of each due user's streaks, which the batch query brings with the user
    /// (`Candidate.recordedHolds`, of the streaks `within`), then one pure verdict per due user
    /// (`IntakeGuard.verdict`). No plan reads every hold: at a mass hold of ten million users
    /// that would be a dictionary of ten million.
    struct Holds {
        /// The guard's settings.
        let intake: IntakeGuard
        /// `D`.
        let runDate: CalendarDate
        /// The intake gaps among `L' + 1 … D − 1` of every streak the run date may alert.
        let gaps: Set<CalendarDate>
        /// The starts (`L'`) of the streaks the run date may alert: the batch query brings their holds.
        let within: ClosedRange<CalendarDate>
        /// When the plan is read: a hold whose end has come is over.
        let now: Date

        /// The guard of a plan of `scope` on `runDate`; nil when it holds nothing (off, or a plan
        /// without alerts).
        static func read(_ db: PGConnection, configuration: NotifierConfiguration, runDate: CalendarDate,
                         scope: Scope) throws -> Holds? {
            let intake = configuration.intakeGuard
            guard intake.isOn, scope.evaluatesRule, scope.kinds.contains(.alert) else { return nil }
            let rule = configuration.rule
            let oldest = rule.oldestDueCheckIn(runDate: runDate)
            let missed = oldest.adding(days: 1)...runDate.adding(days: -1)
            let counts = try HoldStore.intake(db, days: IntakeGuard.window(for: missed), serviceZone: configuration.timeZone)
            return Holds(intake: intake, runDate: runDate, gaps: Set(intake.gaps(in: missed, intake: counts)),
                         within: oldest...rule.latestQualifyingCheckIn(runDate: runDate),
                         now: Date())
        }

        /// The verdict on a due user's alert.
        func verdict(_ candidate: Candidate, _ evaluation: Evaluation) -> IntakeGuard.Verdict {
            guard let since = evaluation.effectiveLastCheckIn,
                  let missed = IntakeGuard.missedDays(since: since, runDate: runDate) else { return .send }
            return intake.verdict(missed: missed, gaps: gaps,
                                  hold: candidate.recordedHolds[since], now: now)
        }
    }

    /// Applies the guard to one evaluation: a due user whose alert is held is decided `held`
    /// (a new hold is counted, and kept for the run to record with `keeping`).
    mutating func hold(_ candidate: Candidate, _ evaluation: inout Evaluation, by holds: Holds?, keeping: Bool) {
        guard let holds, evaluation.decision == .send else { return }
        switch holds.verdict(candidate, evaluation) {
        case .send:
            return
        case .holdNow(let gapDays):
            newHeld += 1
            if keeping {
                newHolds.append(HoldStore.NewHold(streak: HoldStore.Streak(userID: candidate.userID, since: evaluation.effectiveLastCheckIn!),
                                                  gapDays: gapDays))
            }
            heldGapDays.formUnion(gapDays)
        case .stillHeld(let hold):
            heldUntil = min(heldUntil ?? hold.releaseAt, hold.releaseAt)
            heldGapDays.formUnion(hold.gapDays)
        }
        evaluation.decision = .held
    }
}
