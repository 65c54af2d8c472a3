import Foundation
import Testing
@testable import Config
@testable import Delivery
@testable import Values

@Suite("RateLimiter (SMTP_RATE_LIMIT)")
struct RateLimiterTests {
    @Test("messages are spaced at 1/rate across threads: 12 at 40/s take at least 11/40 s")
    func spacing() {
        let limiter = RateLimiter(perSecond: 40)
        let stop = StopSignal()
        let start = Date()
        WorkerPool.run(count: 3, name: "rate") { _ in
            for _ in 0..<4 { _ = limiter.acquire(stop: stop) }
        }
        // A lower bound only: the limiter must never let messages through faster than the rate.
        #expect(Date().timeIntervalSince(start) >= 11.0 / 40 - 0.01)
    }

    @Test("a stop ends a wait for the next slot at once, and no message may go")
    func stopped() {
        let limiter = RateLimiter(perSecond: 0.01)  // one message per 100 s
        let stop = StopSignal()
        #expect(limiter.acquire(stop: stop))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { stop.stop() }
        let start = Date()
        #expect(!limiter.acquire(stop: stop))
        let waited = Date().timeIntervalSince(start)
        #expect(waited >= 0.15 && waited < 5, "waited \(waited) s for a slot 100 s away")
        #expect(!limiter.acquire(stop: stop))
    }

    @Test("the configuration accepts a positive rate and refuses others")
    func configuration() throws {
        #expect(try ConfigurationLoader(environment: ["SMTP_RATE_LIMIT": "12.5"], filePath: nil).load().smtp.rateLimit == 12.5)
        #expect(try ConfigurationLoader(environment: [:], filePath: nil).load().smtp.rateLimit == nil)
        #expect { try ConfigurationLoader(environment: ["SMTP_RATE_LIMIT": "0"], filePath: nil).load() } throws: {
            ($0 as? ConfigurationError)?.setting == "SMTP_RATE_LIMIT"
        }
    }
}
