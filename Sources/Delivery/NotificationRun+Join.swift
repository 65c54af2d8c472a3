import Foundation
import Mail
import Store

extension NotificationRun {
    /// Joins the sending of `open`, another daemon's run of the same run date and slots
    /// (docs/delivery.md, "Several daemons share an instant's sending"): reads the same due set
    /// from its other end (`RunPlan.Scope.fromTheEnd`) and sends what it claims — each claim
    /// gives a message to one daemon only, and a message the other claimed or sent is passed
    /// over. It decides nothing else: the guards, skips, holds, introductions and the lifecycle's
    /// messages are the run's that holds the run lock, which decided them before opening its
    /// sending. Recorded as a run of its own (mode `daemon-join`, `joined_run`), which the
    /// daemon's catch-up does not count as the day's run.
    package func join(_ open: SharedSending.Run, makeTransport: (@Sendable () throws -> any MailTransport)? = nil,
                      control: RunControl = RunControl()) throws -> RunResult {
        var scope = scope
        scope.fromTheEnd = true
        let joining = NotificationRun(configuration: configuration, runDate: open.runDate, mode: .join, logger: logger, host: host,
                                      scope: scope, sessions: sessions)
        let composer = try MailComposer(sending: configuration.mail)
        let run = try Steps.begin(joining, control: control, joining: open.id)
        var plan = RunPlan()
        plan.ruleJobs = max(1, open.jobs)
        let delivery = run.deliver(plan, through: joining.dispatcher(composer: composer, store: run.store, runID: run.id,
                                                                     makeTransport: makeTransport, control: control))
        return run.report(delivery)
    }
}

extension NotificationRun.Steps {
    /// Delivers `plan` as `deliver` does, with the sending open to other daemons (the daemon's
    /// runs: `SharedSending`): the introductions first, on their own — a new contact hears who
    /// named them before any alert, whichever daemon sends it — then, once the run is marked open,
    /// the alerts as they stream and the lifecycle's other messages. Failing to mark it open only
    /// keeps the others out.
    func deliverShared(_ plan: RunPlan, through dispatcher: Dispatcher) -> DeliveryResult {
        var plan = plan
        let introductions = plan.jobs.filter { $0.kind == .introduction }
        var first = DeliveryResult(tally: plan.tally)
        if !introductions.isEmpty {
            first = dispatcher.deliver(introductions, into: plan.tally)
            plan.jobs.removeAll { $0.kind == .introduction }
            plan.tally = first.tally
        }
        if first.errors.isEmpty && first.notStarted == 0 {
            do { try db.perform { try SharedSending.open($0, runID: id, jobs: plan.ruleJobs) } } catch {
                run.logger.warning("the run's sending is not open to other daemons: \(error)", metadata: base)
            }
        }
        var rest = deliver(plan, through: dispatcher)
        rest.errors = first.errors + rest.errors
        rest.notStarted += first.notStarted
        rest.contactsNotMarked = first.contactsNotMarked ?? rest.contactsNotMarked
        return rest
    }
}
