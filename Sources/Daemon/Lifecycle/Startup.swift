import Values

/// The daemon's start as its parts wait for it: the scheduler says `READY` only once the page
/// listens, and the parts that serve (the all-clear watcher, next a bounce reader) start their
/// loops only after that, so that a daemon that fails to start (exit 78) has done nothing.
final class Startup: Sendable {
    private enum State {
        case starting([CheckedContinuation<Bool, Never>])
        case done(started: Bool)
    }

    private let state = Locked(State.starting([]))

    /// Says how the start went (once; later calls change nothing) and wakes every part waiting.
    func finish(started: Bool) {
        let waiting: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            guard case .starting(let waiting) = state else { return [] }
            state = .done(started: started)
            return waiting
        }
        for part in waiting { part.resume(returning: started) }
    }

    /// Returns once the start is over: true when the daemon started.
    func started() async -> Bool {
        await withCheckedContinuation { (part: CheckedContinuation<Bool, Never>) in
            let done: Bool? = state.withLock { state in
                switch state {
                case .starting(let waiting):
                    state = .starting(waiting + [part])
                    return nil
                case .done(let started):
                    return started
                }
            }
            if let done { part.resume(returning: done) }
        }
    }
}
