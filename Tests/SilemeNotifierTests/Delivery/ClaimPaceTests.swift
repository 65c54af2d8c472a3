import Testing
@testable import Delivery

/// How many jobs a worker claims per statement (the window after a check-in, docs/guards.md).
@Suite("Dispatcher.ClaimPace")
struct ClaimPaceTests {
    @Test("the first statement claims Dispatcher.claimBatch")
    func first() {
        #expect(Dispatcher.ClaimPace().batch == Dispatcher.claimBatch)
        #expect(Dispatcher.claimBatch == 4)
    }

    @Test("later ones claim about a second of sending at the recent pace, between 1 and the limit",
          arguments: [(0.25, 4), (0.1, 10), (0.001, 32), (0, 32), (1.0, 1), (3.0, 1), (0.3, 3)])
    func pace(secondsPerJob: Double, expected: Int) {
        var pace = Dispatcher.ClaimPace()
        pace.record(jobs: 4, seconds: 4 * secondsPerJob)
        #expect(pace.batch == expected)
    }

    @Test("the pace follows the server: a slow batch halves a fast average's batch size at once")
    func follows() {
        var pace = Dispatcher.ClaimPace()
        pace.record(jobs: 32, seconds: 32 * 0.001)
        #expect(pace.batch == Dispatcher.ClaimPace.limit)
        // The server turns slow (2 s a mail): the next statement claims 1.
        pace.record(jobs: 32, seconds: 32 * 2)
        #expect(pace.batch == 1)
        // An empty batch changes nothing.
        let before = pace.secondsPerJob
        pace.record(jobs: 0, seconds: 5)
        #expect(pace.secondsPerJob == before)
    }
}
