import Foundation

/// Runs blocking work (libpq, libcurl) on dedicated threads, never on Swift concurrency's
/// cooperative pool, and waits for all of them.
package enum WorkerPool {
    /// Runs `body(index)` on `count` new threads and returns when every one has finished.
    package static func run(count: Int, name: String, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.name = "\(name)-\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
    }
}
