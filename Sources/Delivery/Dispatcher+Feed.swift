import Foundation
import Rule
import Store
import Values

extension Dispatcher {
    /// The messages of one delivery as its senders take them: those read before it (`first`, then
    /// `last`: a plan's lifecycle messages) and, between them, the rule's alerts as a reader
    /// streams them while the senders send. At most `capacity` streamed messages wait to be
    /// taken: a reader ahead of the senders waits for them, senders ahead of the reader wait for
    /// it — so a run holds a bounded number of messages whatever the number of users or of mails
    /// (a message waiting here is about a kilobyte).
    ///
    /// Sendable unchecked, and it must stay so: the reader and the senders wait on one
    /// `NSCondition` that guards every changing value (a `Mutex` cannot wait); the compiler
    /// cannot see that lock.
    package final class Feed: @unchecked Sendable {
        /// Thrown by `put` once the senders stopped taking messages (the run was stopped, or
        /// every sender gave up): the reader ends, and what it had not read stays due.
        package struct Closed: Error, CustomStringConvertible {
            package var description: String { "the run's senders stopped taking messages" }
        }

        /// Streamed messages that may wait to be taken.
        package static let capacity = 1000

        private let condition = NSCondition()
        // Under the condition's lock.
        private var first: ArraySlice<DeliveryJob>
        private var queue: [DeliveryJob] = []
        private var head = 0
        private var last: ArraySlice<DeliveryJob>
        /// A reader is still streaming into `queue`.
        private var streaming: Bool
        private var closed = false
        /// The messages streamed so far, and those the reader said it would stream.
        private var streamed = 0
        private let expected: Int
        private let capacity: Int

        /// The messages in all (the progress's `due`; the senders' share of a small run): the
        /// lists' and the number the reader expects to stream.
        package let due: Int

        /// The messages of `jobs`, read before the delivery.
        package convenience init(_ jobs: [DeliveryJob]) {
            self.init(first: jobs, streaming: nil, then: [])
        }

        /// `first`, then the messages a reader streams through `put` until `finish` (about
        /// `streaming` of them: nil, none), then `last`.
        package init(first: [DeliveryJob], streaming: Int?, then last: [DeliveryJob], capacity: Int = Feed.capacity) {
            self.first = first[...]
            self.last = last[...]
            self.streaming = streaming != nil
            expected = max(0, streaming ?? 0)
            self.capacity = max(1, capacity)
            due = first.count + expected + last.count
        }

        /// Appends a streamed message (the reader), waiting while `capacity` wait to be taken;
        /// throws `Closed` once the senders stopped.
        package func put(_ job: DeliveryJob) throws {
            condition.lock()
            defer { condition.unlock() }
            while queue.count - head >= capacity && !closed { condition.wait() }
            if closed { throw Closed() }
            // The taken ones leave the array once they are as many as may wait (amortised: a
            // reader always ahead never finds the queue empty, and the array would keep every
            // message of the run).
            if head >= capacity || head == queue.count { queue.removeFirst(head); head = 0 }
            queue.append(job)
            streamed += 1
            condition.broadcast()
        }

        /// The reader's stream ended (with an error or not: its error is the reader's to report).
        package func finish() {
            condition.lock()
            streaming = false
            condition.broadcast()
            condition.unlock()
        }

        /// Takes up to `count` messages in order — waiting for the reader only while none is
        /// taken yet — and none once every message was taken.
        package func take(_ count: Int) -> [DeliveryJob] {
            condition.lock()
            defer { condition.unlock() }
            var taken: [DeliveryJob] = []
            while taken.count < count && !closed {
                if let job = first.popFirst() {
                    taken.append(job)
                } else if head < queue.count {
                    taken.append(queue[head])
                    head += 1
                    condition.broadcast()
                } else if streaming {
                    if !taken.isEmpty { break }
                    condition.wait()
                } else if let job = last.popFirst() {
                    taken.append(job)
                } else {
                    break
                }
            }
            return taken
        }

        /// The senders stopped (the delivery ended): a waiting or later `put` throws `Closed`.
        package func close() {
            condition.lock()
            closed = true
            condition.broadcast()
            condition.unlock()
        }

        /// The streamed messages waiting to be taken.
        package var waiting: Int {
            condition.lock()
            defer { condition.unlock() }
            return queue.count - head
        }

        /// The streamed messages the feed holds, taken or not (at most twice `capacity`).
        var held: Int {
            condition.lock()
            defer { condition.unlock() }
            return queue.count
        }

        /// The messages not taken: the lists' and the waiting ones, and — while the reader had
        /// not finished — those it expected to stream and had not yet.
        package var remaining: Int {
            condition.lock()
            defer { condition.unlock() }
            return first.count + (queue.count - head) + last.count + (streaming ? max(0, expected - streamed) : 0)
        }
    }
}

extension Dispatcher {
    /// Delivers `first`, then the messages `read` streams (through the `put` it is given, on a
    /// thread of its own, about `streaming` of them), then `last`, as `deliver(_:into:)` does.
    /// Returns the delivery and how the read ended — its error is not the delivery's, for the
    /// caller to weigh (`Feed.Closed`: the senders stopped first).
    func deliver(first: [DeliveryJob], streaming: Int, then last: [DeliveryJob], into tally: RunTally,
                 reading read: @escaping @Sendable (_ put: ([DeliveryJob]) throws -> Void) throws -> RunPlan)
        -> (delivery: DeliveryResult, read: Result<RunPlan, any Error>) {
        let feed = Feed(first: unique(first), streaming: streaming, then: unique(last))
        let reader = Background("sileme-plan-stream") {
            defer { feed.finish() }
            return try read { jobs in for job in jobs { try feed.put(job) } }
        }
        let delivery = deliver(feed, into: tally)
        return (delivery, Result { try reader.wait() })
    }
}
