import Foundation

/// A wait the notifier names (SPEC §22, docs/operating.md "What a run waits for, and for how
/// long"): what it waits for — a lock, a session, a relay, another run — and the most it waits.
/// A run or a daemon step that waits for something outside itself says so once the wait has
/// lasted `noticeAfter` (and again every `noticeEvery`), and ends with `Exceeded`, naming the
/// wait and its bound, instead of waiting for ever: a wait nobody names is the hang nobody can
/// tell from a slow day.
///
/// Waits inside PostgreSQL are bounded by the server (`lock_timeout`, `PGConnection`); this is
/// for the waits the notifier makes itself by asking again (the run lock, another daemon's run).
package struct BoundedWait: Sendable {
    /// What is waited for, for a person: "the run lock (notifier_run_lock), held by …".
    package var what: String
    /// The most it waits, in seconds.
    package let bound: TimeInterval

    /// After this long a wait says what it waits for: short waits (a lock taken for a moment)
    /// stay quiet.
    package static let noticeAfter: TimeInterval = 5
    /// A long wait says so again this often.
    package static let noticeEvery: TimeInterval = 60

    package init(_ what: String, bound: TimeInterval) {
        self.what = what
        self.bound = bound
    }

    /// Thrown when a wait passed its bound.
    package struct Exceeded: Error, CustomStringConvertible, Sendable {
        /// What was waited for.
        package let what: String
        /// The bound it passed, in seconds.
        package let bound: TimeInterval

        package var description: String { "gave up waiting for \(what) after \(Self.seconds(bound)) (its bound)" }

        static func seconds(_ value: TimeInterval) -> String { "\(Int(value.rounded())) s" }
    }

    /// What a wait does next, having waited `waited` seconds and last said so at `noticed` (nil:
    /// not yet). Pure.
    package enum Step: Sendable, Equatable {
        /// Goes on waiting, quietly.
        case wait
        /// Says that it waits, then goes on.
        case notice
        /// Ends: the bound has passed.
        case giveUp
    }

    /// The next step after `waited` seconds (pure): give up past the bound; say so after
    /// `noticeAfter`, then every `noticeEvery`; else wait.
    package func step(waited: TimeInterval, noticed: TimeInterval?) -> Step {
        if waited >= bound { return .giveUp }
        guard let noticed else { return waited >= Self.noticeAfter ? .notice : .wait }
        return waited - noticed >= Self.noticeEvery ? .notice : .wait
    }

    /// The notice of a wait of `waited` seconds so far: "waiting for X: 12 s so far, at most 1800 s".
    package func notice(waited: TimeInterval) -> String {
        "waiting for \(what): \(Exceeded.seconds(waited)) so far, at most \(Exceeded.seconds(bound))"
    }

    /// The error of this wait.
    package var exceeded: Exceeded { Exceeded(what: what, bound: bound) }

    /// Asks `ready` every `every` seconds until it returns a value (returned), the stop signal is
    /// raised (nil), or the bound passes (throws `Exceeded`). `say` hears the notices (`step`);
    /// `alive` is called at least once a second while waiting (the daemon's watchdog). `ready`
    /// may change `what` (the holder it found) through its `inout` argument.
    package func poll<T>(every: TimeInterval, stop: StopSignal, say: (String) -> Void, alive: () -> Void = {},
                         _ ready: (inout BoundedWait) throws -> T?) throws -> T? {
        var wait = self
        let started = Date()
        var noticed: TimeInterval?
        while true {
            if let value = try ready(&wait) { return value }
            let waited = Date().timeIntervalSince(started)
            switch wait.step(waited: waited, noticed: noticed) {
            case .giveUp: throw wait.exceeded
            case .notice:
                say(wait.notice(waited: waited))
                noticed = waited
            case .wait: break
            }
            guard stop.sleep(max(0, min(every, bound - waited)), alive: alive) else { return nil }
        }
    }
}
