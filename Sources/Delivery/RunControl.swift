import Foundation
import Values

/// How a run is steered while it goes: the process's stop signal (SIGTERM/SIGINT: finish the
/// messages in flight, claim nothing new), and hooks that hear of its progress (for watchdog
/// pings and `STATUS=`), from any thread: Sendable, checked — the signal and two `@Sendable`
/// hooks, all `let`s.
package final class RunControl: Sendable {
    /// The stop signal every wait of the run hears.
    package let stop: StopSignal
    private let onProgress: @Sendable (RunProgress) -> Void
    private let onAlive: @Sendable () -> Void

    /// Creates a control that reports progress to `onProgress` and liveness while waiting (for a
    /// slow server, a retry backoff) to `onAlive`; both are called from worker threads.
    /// `stop` is the process's stop signal (a fresh one, never raised, by default).
    package init(stop: StopSignal = StopSignal(), onProgress: @escaping @Sendable (RunProgress) -> Void = { _ in },
                onAlive: @escaping @Sendable () -> Void = {}) {
        self.stop = stop
        self.onProgress = onProgress
        self.onAlive = onAlive
    }

    /// Asks the run to stop: messages in flight are finished and recorded, nothing new is claimed.
    package func requestStop() { stop.stop() }

    /// Whether a stop was requested.
    package var stopRequested: Bool { stop.isStopped }

    /// Reports progress.
    package func progress(_ value: RunProgress) { onProgress(value) }

    /// Reports that the run is alive while it waits.
    package func alive() { onAlive() }
}

/// A run's progress: how many of the due mails were handled so far.
package struct RunProgress: Sendable, Equatable {
    /// Users evaluated by the batch query so far.
    package var evaluated: Int
    /// Due mails handled (sent, failed or found claimed).
    package var handled: Int
    /// Due mails in all (0 while still evaluating).
    package var due: Int
}
