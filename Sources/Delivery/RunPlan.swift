import Config
import Foundation
import Logging
import Rule
import Store
import Values

/// What a run will do, decided from the database without writing to it: the rule's decision for
/// every listed user (counted into the tally), the skips to record, the messages to send in the
/// order they go out, and what the lifecycle found unusable. The daily run, `retry` and the
/// daemon's all-clear pass carry out a plan; the dry run and the retry plan print one.
package struct RunPlan: Sendable {
    /// Which part of a run date's work a plan covers.
    package struct Scope: Sendable, Equatable {
        /// Only these users, or everyone.
        package var users: Set<String>?
        /// Only these kinds of message.
        package var kinds: Set<DeliveryJob.Kind>
        /// Whether the rule is evaluated (the all-clear pass only answers check-ins).
        package var evaluatesRule: Bool
        /// Only the users of these slots (`NotifySlots.RunDate.keys`: one run date of an instant,
        /// whose slots' instants fall on another date than others'), or every user.
        package var slots: [String]? = nil
        /// One of `count` disjoint shares of the users (`index` from 0), for plans read side by
        /// side and put together (the dry run); the counts and the other messages owed are the
        /// first share's. Nil: all of them.
        package var part: (index: Int, count: Int)? = nil
        /// The users in the opposite order: a daemon that joins another's sending
        /// (`SharedSending`) streams the due set from its other end.
        package var fromTheEnd = false

        package static func == (a: Scope, b: Scope) -> Bool {
            a.users == b.users && a.kinds == b.kinds && a.evaluatesRule == b.evaluatesRule && a.slots == b.slots
                && a.part?.index == b.part?.index && a.part?.count == b.part?.count && a.fromTheEnd == b.fromTheEnd
        }

        /// Whether this plan reads the counts and the owed messages (the whole, or the first share).
        var readsTheRest: Bool { (part?.index ?? 0) == 0 }

        /// The daily run: everyone, every kind.
        package static let day = Scope(users: nil, kinds: Set(DeliveryJob.Kind.allCases), evaluatesRule: true)

        /// `retry`: the given users (and kinds).
        package static func retry(users: Set<String>, kinds: Set<DeliveryJob.Kind>? = nil) -> Scope {
            Scope(users: users, kinds: kinds ?? Set(DeliveryJob.Kind.allCases), evaluatesRule: true)
        }

        /// The daemon's all-clear pass (of the given users, or every user in the all-clear queue),
        /// which also sends the `acknowledged` notices (docs/acknowledgement.md), the
        /// `contact.undeliverable` events (docs/bounces.md), what escalated streaks owe and the
        /// outcome notices (docs/escalation.md): each answers an event at once.
        package static func allClears(users: Set<String>? = nil) -> Scope {
            Scope(users: users, kinds: answers, evaluatesRule: false)
        }

        /// The kinds that answer an event whenever it comes, whatever the user's slot: the daemon's
        /// all-clear pass sends them, and a run of one instant only with its first run date.
        static let answers: Set<DeliveryJob.Kind> = [.allClear, .acknowledged, .undeliverable, .escalation, .unheard,
                                                      .outcomeOK, .outcomeUnreachable]

        /// One run date of an instant (docs/user-time.md): its slots' users, every kind — the
        /// messages that come at once whatever the user's slot (introductions, all-clears) with
        /// the `first` run date only, so that one instant plans each once. A run of some
        /// slots only (`everyone` false: the daemon's, at an instant that is not everyone's)
        /// leaves the all-clears and acknowledged notices to the daemon's all-clear watcher, which
        /// sweeps for them every `ALL_CLEAR_POLL_SECONDS` anyway: their sweep reads every recent
        /// alert (0.05 s at a million users), and a day of many slots has ~200 instants.
        package static func runDate(_ runDate: NotifySlots.RunDate, first: Bool, everyone: Bool = true) -> Scope {
            var kinds = day.kinds
            if !first { kinds.subtract(answers.union([.introduction])) }
            if !everyone { kinds.subtract(answers) }
            return Scope(users: nil, kinds: kinds, evaluatesRule: true, slots: runDate.keys)
        }

        /// Everyone's whole day: the plan counts the stale and future-dated users too.
        package var isWholeDay: Bool { users == nil }
    }

    /// The rule's decisions, counted (the dispatcher adds the messages' outcomes to a copy).
    package var tally = RunTally()
    /// Users (and single contacts) skipped for bad data: recorded in `notification_logs`. With
    /// `read`'s `skipped`, those found since the last batch handed over (fewer than `skipBatch`).
    package var skips: [SkippedUser] = []
    /// The most skips a plan read with `skipped` holds: it hands them over in batches of this many
    /// as it finds them, so that a run's first pass holds a batch, not every skip of the day
    /// (~700 bytes each: ~45 MB at ten million users of the benchmark's model).
    package static let skipBatch = 500
    /// The messages, in sending order: introductions, the rule's alerts, then the lifecycle's others.
    package var jobs: [DeliveryJob] = []
    /// The rule's messages (alerts and their webhook events), counted whether `jobs` keeps them or not.
    package var ruleJobs = 0
    /// The lifecycle's messages as the database owes them (before validation: what the dry run lists).
    /// A plan read with `streamsOwed` keeps the introductions only.
    package var owed: [LifecycleStore.Due] = []
    /// A plan read with `streamsOwed` that found more than `owedKept` of the lifecycle's other
    /// messages: how many (valid, each delivery key once), for the run to stream into its senders
    /// after the alerts (`stream` with `owed`) — the run's `due` counts them. 0: the plan kept
    /// what it found in `jobs`, and the run reads none again.
    package var owedLater = 0
    /// The most of the lifecycle's messages other than introductions a plan read with
    /// `streamsOwed` keeps (as many as the senders' queue holds, ~2 MB): a run that owes a few —
    /// the common case, and the all-clear pass's — reads them once, in its first pass's snapshot,
    /// as before; one that owes more reads them again, a page at a time, as it sends.
    package static let owedKept = Dispatcher.Feed.capacity
    /// Introduction pairs whose address is not usable (recorded as not introduced).
    package var unusableIntroductions: [(user: String, contact: String)] = []
    /// Each listed user's decision — kept for a plan of some users only (the retry plan reads them).
    package var decisions: [String: Decision] = [:]
    /// The intake guard's new holds, for the run to record (docs/intake-hold.md). With `read`'s
    /// `held`, those found since the last batch handed over (fewer than `holdBatch`); a plan that
    /// keeps no skips keeps none (the dry run: at a mass hold they would be every user).
    package var newHolds: [HoldStore.NewHold] = []
    /// How many new holds the plan found (kept, handed over or neither).
    package var newHeld = 0
    /// The most new holds a plan read with `held` keeps: it hands them over in batches of this
    /// many, as it does skips — an outage of the app holds every user's alert at once.
    package static let holdBatch = 1000
    /// The gap days the plan's held alerts were held for.
    package var heldGapDays: Set<CalendarDate> = []
    /// When the earliest of the plan's held alerts recorded before goes out (a new hold ends
    /// `HOLD_HOURS` after the run records it).
    package var heldUntil: Date?

    /// Reads the plan of `scope` on `runDate` (never writes). `includeStale` lists the users past
    /// the catch-up window through `each` instead of counting them (the dry run); `each` hears
    /// every listed user's evaluation as the batch query streams it. `logger` hears of the owed
    /// messages left out as unusable (a run's; a reader that only shows the plan passes none).
    /// The rule's reads (the counts, the holds, the batch query) share one snapshot: a read-only
    /// `REPEATABLE READ` transaction of their own, or the caller's open transaction, in which they
    /// read the summary without the check-in queue when the queue is empty (`CheckInQueue.summary`).
    /// With `alongside`, the lifecycle's owed messages are read on a connection of their own, in
    /// a read-only transaction, while the batch query streams (the dry run: at a million users
    /// they are a third of its time); they read a snapshot of their own. `keepsJobs` false: the
    /// rule's alerts and skips are not kept (`jobs` holds the lifecycle's messages only, `skips`
    /// is empty) — for a reader that hears every user through `each` and carries nothing out
    /// (the dry run), so that what it holds does not grow with the users; `keepsSkips` keeps the
    /// skips all the same (a run's first pass, which streams its alerts afterwards: `stream`). With
    /// `skipped`, the kept skips go to it in batches of `skipBatch` as the batch query streams (it
    /// returns false to leave them with the plan, which then keeps every later one: `skips`); the
    /// plan comes back with the last, smaller batch. `held` takes the intake guard's new holds the
    /// same way, in batches of `holdBatch` (kept as the skips are kept). `afterEach` is called
    /// once the rule's reads have ended (every listed user heard), before the owed messages are
    /// waited for. `streamsOwed`: of the lifecycle's messages the introductions are kept (a new
    /// contact hears who named them before any alert, and their unusable pairs are recorded
    /// before the sends); the others are read a page at a time and validated (`logger` hears of
    /// those left out) — kept as jobs while they are at most `owedKept`, and past that only
    /// counted into `owedLater`, for the run to read again as it sends (`stream`), so that it
    /// holds a page of them, not every one (a real run's first pass, the all-clear pass).
    /// `owedPages`: the owed messages go to it a page at a time as they are read (on the
    /// `alongside` connection's thread when there is one), and `owed` stays empty (the dry run,
    /// which puts them on disk until its report comes to them).
    package static func read(_ db: PGConnection, configuration: NotifierConfiguration, runDate: CalendarDate, scope: Scope,
                            logger: Logger? = nil, includeStale: Bool = false, keepsJobs: Bool = true, keepsSkips: Bool? = nil,
                            streamsOwed: Bool = false, owedPages: (@Sendable ([LifecycleStore.Due]) throws -> Void)? = nil,
                            control: RunControl? = nil, skipped: (([SkippedUser]) throws -> Bool)? = nil,
                            held: (([HoldStore.NewHold]) throws -> Bool)? = nil,
                            alongside: (@Sendable () throws -> PGConnection)? = nil, afterEach: () -> Void = {},
                            each: (Candidate, Evaluation) throws -> Void = { _, _ in }) throws -> RunPlan {
        let lifecycle = Lifecycle(configuration: configuration, runDate: runDate,
                                  logger: logger ?? Logger(label: "sileme-notifier.plan") { _ in SwiftLogNoOpLogHandler() })
        let owed = alongside.flatMap { connect in scope.readsTheRest ? connect : nil }.map { connect in
            Background("sileme-plan-owed") {
                let other = try connect()
                return try other.transaction(readOnly: true) {
                    try lifecycle.owed(other, kinds: scope.kinds, onlyUsers: scope.users, slots: scope.slots, pages: owedPages)
                }
            }
        }
        var plan = RunPlan()
        var alerts: [DeliveryJob] = []
        do {
            // The rule's reads in one snapshot (a transaction of their own unless the caller's is
            // open), so that they may read the summary without the queue when it is empty.
            func evaluate() throws {
                try plan.evaluate(db, configuration: configuration, runDate: runDate, scope: scope, includeStale: includeStale,
                                  counts: true, keepsSkips: keepsSkips ?? keepsJobs, control: control, skipped: skipped,
                                  keepsHolds: keepsSkips ?? keepsJobs, held: held, each: each) { jobs in
                    if keepsJobs { alerts += jobs }
                }
            }
            if scope.evaluatesRule { try db.inTransaction ? evaluate() : db.transaction(readOnly: true, oneSnapshot: true, evaluate) }
            afterEach()
        } catch {
            _ = try? owed?.wait()  // the other thread's connection is done with before this returns
            throw error
        }
        let (now, later) = streamsOwed ? Self.owedNow(scope.kinds) : (scope.kinds, [])
        plan.owed = !scope.readsTheRest ? []
            : try owed?.wait() ?? lifecycle.owed(db, kinds: now, onlyUsers: scope.users, slots: scope.slots, pages: owedPages)
        // A few are kept as read (the common case: nothing to read again); more, only counted.
        var kept: [DeliveryJob] = []
        if scope.readsTheRest && !later.isEmpty {
            var keeps = true
            let count = try lifecycle.stream(db, kinds: later, onlyUsers: scope.users, slots: scope.slots) { jobs in
                guard keeps else { return }
                kept += jobs
                if kept.count > Self.owedKept { (keeps, kept) = (false, []) }
            }
            plan.owedLater = keeps ? 0 : count
        }
        let around = try lifecycle.jobs(db, owed: plan.owed)
        plan.unusableIntroductions = around.unusable
        // Introductions first (a new contact learns who named them before anything else), then
        // the alerts, the all-clears and the follow-ups.
        plan.jobs = around.jobs.filter { $0.kind == .introduction } + alerts + around.jobs.filter { $0.kind != .introduction } + kept
        return plan
    }

    /// The lifecycle's kinds of `kinds` a plan read with `streamsOwed` keeps (`now`: the
    /// introductions) and those it counts for the run to stream (`later`).
    static func owedNow(_ kinds: Set<DeliveryJob.Kind>) -> (now: Set<DeliveryJob.Kind>, later: Set<DeliveryJob.Kind>) {
        (kinds.intersection([.introduction]), kinds.subtracting([.introduction]))
    }

    /// The rule's part of the plan (a scope that evaluates it): every listed user's decision (and,
    /// with `counts`, the stale and future-dated users counted), their skips kept with `keepsSkips`
    /// (handed to `skipped` a batch at a time while it takes them), the guard's new holds kept with
    /// `keepsHolds` (handed to `held` likewise), and their messages handed to `emit` user by user,
    /// each delivery key once.
    mutating func evaluate(_ db: PGConnection, configuration: NotifierConfiguration, runDate: CalendarDate,
                           scope: Scope, includeStale: Bool, counts: Bool, keepsSkips: Bool, control: RunControl?,
                           skipped: (([SkippedUser]) throws -> Bool)? = nil, keepsHolds: Bool = true,
                           held: (([HoldStore.NewHold]) throws -> Bool)? = nil,
                           each: (Candidate, Evaluation) throws -> Void, emit: ([DeliveryJob]) throws -> Void) throws {
        let summary = try CheckInQueue.summary(db)
        if counts && scope.isWholeDay && scope.readsTheRest {
            let store = Self.store(configuration)
            if !includeStale {
                tally.stale = try store.countStale(db, runDate: runDate, rule: configuration.rule, slots: scope.slots, summary: summary)
            }
            tally.futureIgnored = try store.countFutureCheckIns(db, runDate: runDate, rule: configuration.rule,
                                                                slots: scope.slots, summary: summary)
        }
        let hooksAlerts = configuration.webhookSends(.alert)
        let holds = try Holds.read(db, configuration: configuration, runDate: runDate, scope: scope)
        var evaluated = 0
        var handsOver = skipped != nil
        var handsOverHolds = held != nil
        try Self.store(configuration).evaluate(db, runDate: runDate, rule: configuration.rule, includeStale: includeStale,
                                               onlyUsers: scope.users, slots: scope.slots, part: scope.part,
                                               fromTheEnd: scope.fromTheEnd, holdsWithin: holds?.within,
                                               summary: summary) { candidate, evaluation in
            var evaluation = evaluation
            hold(candidate, &evaluation, by: holds, keeping: keepsHolds)
            if handsOverHolds, newHolds.count >= Self.holdBatch, let held {
                handsOverHolds = try held(newHolds)
                if handsOverHolds { newHolds.removeAll(keepingCapacity: true) }
            }
            tally.count(evaluation.decision)
            if scope.users != nil { decisions[candidate.userID] = evaluation.decision }
            evaluated += 1
            if evaluated % 1000 == 0 { control?.progress(RunProgress(evaluated: evaluated, handled: 0, due: 0)) }
            try each(candidate, evaluation)
            let jobs = messages(scope.kinds.contains(.alert) ? configuration.rule.jobs(for: candidate, evaluation) : [],
                                contacts: evaluation.contacts, hooked: hooksAlerts)
            ruleJobs += jobs.count
            if keepsSkips { skip(candidate, evaluation, alerted: !jobs.isEmpty) }
            if handsOver, skips.count >= Self.skipBatch, let skipped {
                handsOver = try skipped(skips)
                if handsOver { skips.removeAll(keepingCapacity: true) }
            }
            if !jobs.isEmpty { try emit(jobs) }
        }
    }

    /// One listed user's messages: their alerts, one per contact address (a claim statement must
    /// not name a delivery key twice), and the alert's webhook event listing the contacts.
    private func messages(_ alerts: [DeliveryJob], contacts: [Evaluation.Contact], hooked: Bool) -> [DeliveryJob] {
        guard let first = alerts.first else { return [] }
        var seen = Set<String>()
        var jobs = alerts.filter { seen.insert($0.contactKey).inserted }
        if hooked { jobs.append(first.onWebhook(contacts: contacts)) }
        return jobs
    }

    /// One listed user's skips: the one their decision records, or — alerted — an invalid
    /// contact's beside valid ones.
    private mutating func skip(_ candidate: Candidate, _ evaluation: Evaluation, alerted: Bool) {
        if alerted {
            for bad in evaluation.invalidContacts {
                skips.append(SkippedUser(userID: candidate.userID, missedDays: evaluation.missedDays,
                                         lastCheckIn: candidate.lastCheckIn, decision: .invalidEmail,
                                         reason: "emergency contact #\(bad.position): \(bad.reason)",
                                         contact: bad.raw.trimmingCharacters(in: .whitespaces).lowercased()))
            }
        } else if evaluation.decision.recordsSkip {
            skips.append(SkippedUser(userID: candidate.userID, missedDays: evaluation.missedDays,
                                     lastCheckIn: candidate.lastCheckIn, decision: evaluation.decision,
                                     reason: evaluation.reason ?? evaluation.decision.rawValue,
                                     newerAccount: evaluation.supersededBy?.userID))
        }
    }

    /// The store the plan reads through (it claims nothing).
    private static func store(_ configuration: NotifierConfiguration) -> NotificationStore {
        NotificationStore(owner: "plan", claimLeaseSeconds: configuration.claimLeaseSeconds)
    }
}
