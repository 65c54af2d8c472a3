import Foundation

/// Work started on a thread of its own now, whose result is waited for later — for reads that
/// may go on beside others, each on its own database connection (libpq's calls block, so a
/// thread, not a task). `wait()` returns the result or throws the work's error; call it before
/// the resources the work uses go away. Sendable, checked: its result is `Locked`, and a
/// semaphore says when it is there.
package final class Background<Result: Sendable>: Sendable {
    private let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)
    private let waited = Locked(false)

    /// Starts `body` on a thread named `name`.
    package init(_ name: String, _ body: @escaping @Sendable () throws -> Result) {
        let thread = Thread { [outcome, finished] in
            let result = Swift.Result { try body() }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the work to end and returns its result (from one thread; again: at once).
    package func wait() throws -> Result {
        let first = waited.withLock { done in
            defer { done = true }
            return !done
        }
        if first { finished.wait() }
        return try outcome.withLock { $0! }.get()
    }
}
