import Foundation

/// A bounded queue from one producing thread to one consuming thread, in order: `put` waits while
/// `capacity` elements wait to be taken, `next` while none do. So what is held between the two is
/// at most twice `capacity` elements (those put, and the batch the consumer is taking from),
/// however many pass through: the dry run's rows of a million users stream from each share's
/// reader to the report instead of being collected first. The producer ends it with `finish`
/// (and the error that stopped it, if one did); a consumer that gives up calls `cancel`, after
/// which `put` throws `Handoff.Cancelled`, so that the producer stops instead of waiting for ever.
///
/// Sendable unchecked, and it must stay so: both threads wait on one `NSCondition` that guards the
/// shared values (a `Mutex` cannot wait), and `taken`/`position` are the one consumer's; the
/// compiler can see neither.
package final class Handoff<Element: Sendable>: @unchecked Sendable {
    /// Thrown by `put` once the consumer has cancelled.
    package struct Cancelled: Error, CustomStringConvertible {
        package var description: String { "the reader of these rows stopped" }
    }

    private let condition = NSCondition()
    private let capacity: Int
    // Under the condition's lock.
    private var incoming: [Element] = []
    private var finished = false
    private var failure: (any Error)?
    private var cancelled = false
    // The consumer's own.
    private var taken: [Element] = []
    private var position = 0

    /// A queue holding at most `capacity` elements not yet taken.
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Appends `element` (producer), waiting while `capacity` wait to be taken; throws
    /// `Cancelled` once the consumer has cancelled.
    package func put(_ element: Element) throws {
        condition.lock()
        defer { condition.unlock() }
        while incoming.count >= capacity && !cancelled { condition.wait() }
        if cancelled { throw Cancelled() }
        incoming.append(element)
        if incoming.count == 1 { condition.broadcast() }
    }

    /// Ends the queue (producer): the consumer takes what is left, then meets the end — or `error`
    /// (again: the first error stays).
    package func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        failure = failure ?? error
        condition.broadcast()
    }

    /// Gives up (consumer): a waiting or later `put` throws `Cancelled`.
    package func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        incoming.removeAll()
        condition.broadcast()
    }

    /// The next element (consumer), waiting for one; nil at the end; the producer's error, if it
    /// finished with one, once the elements put before it are taken.
    package func next() throws -> Element? {
        if position == taken.count {
            taken.removeAll(keepingCapacity: true)
            position = 0
            condition.lock()
            defer { condition.unlock() }
            while incoming.isEmpty && !finished { condition.wait() }
            if incoming.isEmpty {
                if let failure { throw failure }
                return nil
            }
            swap(&taken, &incoming)
            condition.broadcast()
        }
        position += 1
        return taken[position - 1]
    }
}
