import Config
import Foundation
import Logging
import Rule
import Store
import Values

/// What happens at an instant (docs/user-time.md), written once for the daemon, `--run-now` and
/// `release`: the runs of its run dates, latest first, one after the other until a stop (or, in
/// the daemon, a failure); then — when every user was served and no run failed — the end of the
/// holds that ended before the runs began (docs/intake-hold.md): their alerts were just sent, or
/// handed to the retries, so the daemon no longer wakes for them.
///
/// The callers differ only in what they do around each run (`execute`'s hooks): the daemon feeds
/// its watchdog, says each run in `STATUS=`, pings the heartbeat and backs off after a failure.
package struct InstantRuns: Sendable {
    /// One run per run date, latest first.
    package let runs: [NotificationRun]
    /// Whether the runs serve every user (not the daemon's run of the slots whose instant came):
    /// only then are the holds done with.
    package let everyone: Bool
    private let configuration: NotifierConfiguration
    private let sessions: SessionKeeper?

    /// The runs of `when`, latest run date first: one of everyone for a date; for an instant, one
    /// per run date its users are on (one of everyone when all are on one date), with the slots
    /// read now (or `known`, as `SlotRuns.runDates` takes them). `among`: of these slots only (the
    /// daemon's, whose instant came). With `sessions` (the daemon's), the runs take their database
    /// sessions from it.
    package static func read(_ when: RunWhen, configuration: NotifierConfiguration, mode: RunMode, among: Set<String>? = nil,
                             known: NotifySlots? = nil, logger: Logger, host: String = ProcessInfo.processInfo.hostName,
                             sessions: SessionKeeper? = nil) throws -> InstantRuns {
        let db = try sessions?.take() ?? PGConnection(configuration.database, applicationName: "sileme-notifier (slots)")
        defer { sessions?.keep(db) }
        let runs = try SlotRuns.runDates(when, db, configuration: configuration, among: among, known: known, logger: logger).dates.map {
            NotificationRun(configuration: configuration, runDate: $0.date, mode: mode, logger: logger, host: host, scope: $0.scope,
                            sessions: sessions)
        }
        return InstantRuns(runs: runs, everyone: among == nil, configuration: configuration, sessions: sessions)
    }

    /// A one-shot run of `when` (`--run-now`, `release`; the caller holds the run lock): every
    /// run date's run, the next even after one failed (nobody comes back for it). Throws the error
    /// that ended the runs or kept the holds from ending; returns the most serious exit status.
    package static func once(_ when: RunWhen, configuration: NotifierConfiguration, logger: Logger, stop: StopSignal) throws -> ExitStatus {
        let outcome = try read(when, configuration: configuration, mode: .runNow, logger: logger).execute(stop: stop, afterFailure: .goOn)
        if let error = outcome.thrown ?? outcome.holdsNotEnded { throw error }
        return outcome.status
    }

    /// Carries out the runs, latest run date first, until `stop` or the course ends them
    /// (`Course`), then ends the holds when the course says so. `starting` gives each run its
    /// control as it starts (by default one that hears `stop` only; it must hear `stop`);
    /// `finished` hears how each ended. `started`: when the runs began (a hold over by then is
    /// done with after them).
    package func execute(stop: StopSignal, afterFailure: AfterFailure, started: Date = Date(),
                         starting: ((NotificationRun) -> RunControl)? = nil,
                         finished: (NotificationRun, Result<RunResult, any Error>) -> Void = { _, _ in }) -> Outcome {
        var course = Course(afterFailure: afterFailure, everyone: everyone)
        var thrown: (any Error)?
        for run in runs {
            guard course.goesOn(stopped: stop.isStopped) else { break }
            let control = starting?(run) ?? RunControl(stop: stop)
            let result = Result { try run.execute(control: control) }
            switch result {
            case .success(let done): course.ended(done)
            case .failure(let error):
                course.threw()
                thrown = thrown ?? error
            }
            finished(run, result)
        }
        var outcome = Outcome(status: course.status, completed: course.completed(stopped: stop.isStopped), thrown: thrown)
        if course.endsHolds(stopped: stop.isStopped) {
            do { try endHolds(over: started) } catch { outcome.holdsNotEnded = error }
        }
        return outcome
    }

    /// The holds that ended before `instant` are done with (`HoldStore.endHolds`), on one of the
    /// kept sessions or a session of its own.
    private func endHolds(over instant: Date) throws {
        if let sessions {
            try sessions.with { try HoldStore.endHolds($0, over: instant) }
        } else {
            try HoldStore.endHolds(try PGConnection(configuration.database, applicationName: "sileme-notifier (holds)"), over: instant)
        }
    }

    /// What follows a failed run (errors, or a throw) of one run date. A throw ends the runs either way.
    package enum AfterFailure: Sendable, Equatable {
        /// The runs end: the daemon backs off and comes back to the whole instant.
        case stop
        /// The next run date's run goes (a one-shot run: nobody would come back for it).
        case goOn
    }

    /// What an instant's runs came to.
    package struct Outcome {
        /// The most serious exit status of the runs that returned (`ExitStatus.then`).
        package var status: ExitStatus
        /// Whether every run returned without an error and no stop came: the instant is served.
        package var completed: Bool
        /// The first error a run threw (it ended the runs).
        package var thrown: (any Error)?
        /// Why the holds were not recorded as ended when they should have been.
        package var holdsNotEnded: (any Error)?
    }

    /// The course of an instant's runs as each ends — whether the next one goes, the exit status
    /// so far, whether the holds end after them — apart from the runs themselves (pure).
    package struct Course: Sendable, Equatable {
        /// What follows a failed run.
        package let afterFailure: AfterFailure
        /// Whether the runs serve every user.
        package let everyone: Bool
        /// The most serious exit status so far.
        package private(set) var status = ExitStatus.success
        /// Whether every run so far returned without an error.
        package private(set) var clean = true
        /// Whether a run threw.
        package private(set) var didThrow = false

        package init(afterFailure: AfterFailure, everyone: Bool) {
            self.afterFailure = afterFailure
            self.everyone = everyone
        }

        /// A run returned `result` (with errors or not; errors after a stop end the runs for
        /// the stop, and nothing is done with).
        package mutating func ended(_ result: RunResult) {
            status = status.then(result.exitStatus)
            clean = clean && result.errors.isEmpty
        }

        /// A run threw: the runs end.
        package mutating func threw() {
            didThrow = true
            clean = false
        }

        /// Whether the next run goes: not after a stop or a throw, nor after a failure when the
        /// runs stop at one.
        package func goesOn(stopped: Bool) -> Bool {
            !stopped && !didThrow && (clean || afterFailure == .goOn)
        }

        /// Whether the instant is served: every run returned without an error, and no stop came.
        package func completed(stopped: Bool) -> Bool { clean && !stopped }

        /// Whether the holds that ended before the runs began are done with: every user was
        /// served (`completed`, and the runs were of everyone).
        package func endsHolds(stopped: Bool) -> Bool { everyone && completed(stopped: stopped) }
    }
}
