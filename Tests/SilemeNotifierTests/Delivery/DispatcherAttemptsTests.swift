import Foundation
import Testing
@testable import Delivery

/// The dispatcher's attempts at one claimed message, channel-blind: a fake attempt scripted with
/// the failures a channel can throw.
@Suite("Dispatcher.attempting")
struct DispatcherAttemptsTests {
    /// An attempt that throws `failures` in turn, then answers "ok"; counts its calls.
    final class Script: @unchecked Sendable {
        var failures: [ChannelFailure]
        var calls = 0
        init(_ failures: [ChannelFailure]) { self.failures = failures }
        func attempt() throws(ChannelFailure) -> String {
            calls += 1
            if !failures.isEmpty { throw failures.removeFirst() }
            return "ok"
        }
    }

    static func run(_ script: Script, limit: Int = 3, backoff: TimeInterval = 2, stopped: Bool = false)
        -> (result: Result<String, ChannelFailure>, attempts: Int, waits: [TimeInterval]) {
        var waits: [TimeInterval] = []
        let (result, attempts) = Dispatcher.attempting({ () throws(ChannelFailure) in try script.attempt() }, limit: limit,
                                                       backoff: backoff) { waits.append($0); return !stopped }
        return (result, attempts, waits)
    }

    @Test("transient failures are tried again after a doubling backoff, and delivered")
    func transientThenDelivered() {
        let run = Self.run(Script([.transient("451", .thisMessage), .transient("refused", .serverUnusable)]))
        #expect(run.result == .success("ok") && run.attempts == 3 && run.waits == [2, 4])
    }

    @Test("the last transient failure stands after the limit of attempts")
    func transientToTheLimit() {
        let script = Script(Array(repeating: .transient("451", .thisMessage), count: 5))
        let run = Self.run(script)
        #expect(run.result == .failure(.transient("451", .thisMessage)) && run.attempts == 3 && script.calls == 3 && run.waits == [2, 4])
    }

    @Test("permanent and unknown failures are not tried again within the run")
    func notAgain() {
        for failure in [ChannelFailure.permanent("550 5.1.1", undeliverable: true), .unknown("no reply")] {
            let run = Self.run(Script([failure]))
            #expect(run.result == .failure(failure) && run.attempts == 1 && run.waits.isEmpty)
        }
    }

    @Test("a short Retry-After is waited for; one over the longest wait in a run, or a stop, leaves it for a later pass")
    func retryAfterAndStop() {
        let short = Self.run(Script([.transient("HTTP 429", .thisMessage, retryAfter: 10)]))
        #expect(short.result == .success("ok") && short.waits == [10])
        let long = Self.run(Script([.transient("HTTP 429", .thisMessage, retryAfter: Dispatcher.longestWaitInRun + 1)]))
        #expect(long.attempts == 1 && long.waits.isEmpty && long.result == .failure(.transient("HTTP 429", .thisMessage, retryAfter: 31)))
        let stopped = Self.run(Script([.transient("451", .thisMessage)]), stopped: true)
        #expect(stopped.attempts == 1 && stopped.waits == [2] && (try? stopped.result.get()) == nil)
    }

    @Test("one attempt allowed: no retry")
    func single() {
        let run = Self.run(Script([.transient("451", .thisMessage)]), limit: 1)
        #expect(run.attempts == 1 && run.waits.isEmpty)
    }
}
