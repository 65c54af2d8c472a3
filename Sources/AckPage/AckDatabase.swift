import Config
import Dispatch
import Foundation
import Store

/// The page's database session: one libpq connection used only on its own serial queue, so a
/// blocking call never occupies Swift's cooperative threads (on a 2-core machine the pool has two:
/// two blocked calls would stall every task of the process). Opened on first use; dropped and
/// opened again after a failure.
///
/// Sendable unchecked, and it must stay so: it wraps a C handle (libpq's `PGconn`) that only the
/// queue touches — the compiler cannot see a queue's confinement (an actor on this queue would
/// need a custom executor, which Linux's Dispatch does not make simple).
final class AckDatabase: @unchecked Sendable {
    private let configuration: NotifierConfiguration
    private let queue = DispatchQueue(label: "sileme-ack-db")
    /// Touched only on `queue`.
    private var connection: PGConnection?

    init(configuration: NotifierConfiguration) { self.configuration = configuration }

    /// Runs `body` on the connection, on the queue; a broken connection is opened again once.
    func run<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                continuation.resume(with: Result {
                    do {
                        return try body(try open())
                    } catch let error as DatabaseError where error.kind == .unreachable {
                        connection = nil
                        return try body(try open())
                    }
                })
            }
        }
    }

    private func open() throws -> PGConnection {
        if let connection { return connection }
        let made = try PGConnection(configuration.database, applicationName: "sileme-notifier (ack page)")
        connection = made
        return made
    }
}
