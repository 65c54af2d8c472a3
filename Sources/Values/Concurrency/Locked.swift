import Foundation

/// A value shared between worker threads, read and changed only under its lock.
///
/// Sendable unchecked, and it must stay so: it is the house's lock, what lets the others be
/// checked Sendable (as the standard `Mutex` is unchecked inside), and the compiler cannot see that
/// the lock guards `value`. A class, so that it is shared by reference, and asking no `Sendable`
/// of what it holds: a value taken out (a kept session) is then the taker's alone.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
