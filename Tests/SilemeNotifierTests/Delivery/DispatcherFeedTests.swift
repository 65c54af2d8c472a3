import Foundation
import Testing
import Values
@testable import Delivery
@testable import Rule

/// `Dispatcher.Feed`: the messages a run's senders take, the rule's alerts streamed by a reader
/// while they send, with at most `capacity` waiting (docs/delivery.md).
@Suite("Dispatcher.Feed")
struct DispatcherFeedTests {
    static let day = CalendarDate(year: 2026, month: 1, day: 13)!

    static func job(_ user: Int, _ kind: DeliveryJob.Kind = .alert) throws -> DeliveryJob {
        DeliveryJob(kind: kind, userID: "u\(user)", name: try DisplayName(cleaning: "User \(user)"),
                    email: try EmailAddress(validating: "c\(user)@example.com"), missedDays: 2, lastCheckIn: day)
    }

    /// Takes everything with `senders` threads, each `count` at a time; returns the user ids in
    /// the order taken (one thread: the feed's order).
    static func drain(_ feed: Dispatcher.Feed, count: Int, senders: Int = 1) -> [[String]] {
        let taken = Locked<[[String]]>(Array(repeating: [], count: senders))
        WorkerPool.run(count: senders, name: "feed-test") { index in
            while true {
                let batch = feed.take(count)
                if batch.isEmpty { return }
                #expect(batch.count <= count)
                taken.withLock { $0[index] += batch.map(\.userID) }
            }
        }
        return taken.withLock { $0 }
    }

    @Test("the lists and the stream in order: the first list, what the reader streams, then the last list")
    func order() throws {
        let first = [try Self.job(-1, .introduction)], last = [try Self.job(-2, .allClear)]
        let feed = Dispatcher.Feed(first: first, streaming: 5_000, then: last, capacity: 3)
        #expect(feed.due == 5_002)
        let reader = Background("feed-reader") {
            for user in 0..<5_000 { try feed.put(try Self.job(user)) }
            feed.finish()
        }
        let taken = Self.drain(feed, count: 4)[0]
        try reader.wait()
        #expect(taken == ["u-1"] + (0..<5_000).map { "u\($0)" } + ["u-2"])
        #expect(feed.remaining == 0)
    }

    @Test("several senders take every streamed message exactly once")
    func senders() throws {
        let feed = Dispatcher.Feed(first: [], streaming: 10_000, then: [], capacity: 7)
        let reader = Background("feed-reader") {
            for user in 0..<10_000 { try feed.put(try Self.job(user)) }
            feed.finish()
        }
        let taken = Self.drain(feed, count: 5, senders: 4)
        try reader.wait()
        #expect(taken.flatMap { $0 }.sorted() == (0..<10_000).map { "u\($0)" }.sorted())
        // Each sender took its messages in the stream's order.
        for own in taken {
            let numbers = own.map { Int($0.dropFirst())! }
            #expect(numbers == numbers.sorted())
        }
    }

    @Test("the reader never has more than the capacity waiting: it waits for the senders")
    func bounded() throws {
        let feed = Dispatcher.Feed(first: [], streaming: 100, then: [], capacity: 10)
        let reader = Background("feed-reader") {
            for user in 0..<100 { try feed.put(try Self.job(user)) }
            feed.finish()
        }
        // Nothing is taken yet: the reader stops at the capacity (it would put the other 90 in
        // well under the pause, were it not waiting); `remaining` counts the waiting ones and
        // those it has not put.
        while feed.waiting < 10 { Thread.sleep(forTimeInterval: 0.001) }
        Thread.sleep(forTimeInterval: 0.05)
        #expect(feed.waiting == 10)
        #expect(feed.remaining == 100)
        #expect(Self.drain(feed, count: 32)[0].count == 100)
        try reader.wait()
    }

    @Test("a reader always ahead of the senders: the feed holds at most twice the capacity, not every message streamed")
    func heldBounded() throws {
        let feed = Dispatcher.Feed(first: [], streaming: 5_000, then: [], capacity: 10)
        let reader = Background("feed-reader") {
            for user in 0..<5_000 { try feed.put(try Self.job(user)) }
            feed.finish()
        }
        var taken = 0, mostHeld = 0
        while true {
            // The reader fills the queue before each take, as a reader ahead of the senders does.
            while feed.waiting < 10 && feed.remaining > feed.waiting { Thread.sleep(forTimeInterval: 0.0001) }
            let batch = feed.take(3)
            if batch.isEmpty { break }
            taken += batch.count
            mostHeld = max(mostHeld, feed.held)
        }
        try reader.wait()
        #expect(taken == 5_000)
        #expect(mostHeld <= 20)
    }

    @Test("closed by the senders, a reader waiting for room stops with Closed; what was not taken is counted")
    func closed() throws {
        let feed = Dispatcher.Feed(first: [try Self.job(-1, .introduction)], streaming: 50, then: [try Self.job(-2, .allClear)],
                                   capacity: 2)
        let reader = Background("feed-reader") {
            for user in 0..<50 { try feed.put(try Self.job(user)) }
            feed.finish()
        }
        // The reader fills the queue (two) and waits for room.
        while feed.waiting < 2 { Thread.sleep(forTimeInterval: 0.001) }
        #expect(feed.take(3).map(\.userID) == ["u-1", "u0", "u1"])
        feed.close()
        #expect(throws: Dispatcher.Feed.Closed.self) { try reader.wait() }
        #expect(feed.take(5).isEmpty)
        // 48 streamed (waiting) or still to stream, and the last list's one.
        #expect(feed.remaining == 49)
    }

    @Test("a list alone: a delivery read before it")
    func list() throws {
        let feed = Dispatcher.Feed([try Self.job(1), try Self.job(2), try Self.job(3)])
        #expect(feed.due == 3)
        #expect(Self.drain(feed, count: 2)[0] == ["u1", "u2", "u3"])
        #expect(feed.remaining == 0)
    }
}
