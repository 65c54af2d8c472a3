import Foundation
import Testing
import Values

/// `Handoff`: what the dry run's share readers hand their rows to the report through.
@Suite struct HandoffTests {
    struct Broken: Error, Equatable {}

    @Test func everyElementInOrderThroughASmallQueue() throws {
        let queue = Handoff<Int>(capacity: 3)
        let producer = Background("handoff-test") {
            for value in 0..<10_000 { try queue.put(value) }
            queue.finish()
        }
        var taken: [Int] = []
        while let value = try queue.next() { taken.append(value) }
        try producer.wait()
        #expect(taken == Array(0..<10_000))
        #expect(try queue.next() == nil)
    }

    @Test func theProducersErrorComesAfterItsElements() throws {
        let queue = Handoff<Int>(capacity: 2)
        let producer = Background("handoff-test") {
            for value in 0..<5 { try queue.put(value) }
            queue.finish(throwing: Broken())
        }
        var taken: [Int] = []
        #expect(throws: Broken.self) {
            while let value = try queue.next() { taken.append(value) }
        }
        try producer.wait()
        #expect(taken == [0, 1, 2, 3, 4])
    }

    @Test func aCancelStopsAProducerWaitingForRoom() throws {
        let queue = Handoff<Int>(capacity: 2)
        let producer = Background("handoff-test") {
            for value in 0..<1_000 { try queue.put(value) }
            queue.finish()
        }
        #expect(try queue.next() == 0)
        queue.cancel()
        #expect(throws: Handoff<Int>.Cancelled.self) { try producer.wait() }
    }
}
