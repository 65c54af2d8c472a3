import Testing
@testable import Delivery

@Suite("The delivery keys a lifecycle stream has handed on")
struct SeenKeysTests {
    @Test("each key once: a key seen before is refused, every other one taken, however alike")
    func eachOnce() {
        var keys = Lifecycle.SeenKeys()
        let all = (0..<20_000).map { "user-\($0 % 5_000)|2026-01-\(12 + $0 / 5_000)|all_clear|email|c\($0 % 7)@example.com" }
        var taken = 0
        for key in all where keys.insert(key) { taken += 1 }
        #expect(taken == 20_000, "20,000 different keys: none taken for another")
        var again = 0
        for key in all where keys.insert(key) { again += 1 }
        #expect(again == 0, "each of them a second time: refused")
        let first = keys.insert("user-0|2026-01-12|all_clear|webhook|")
        let second = keys.insert("user-0|2026-01-12|all_clear|webhook|")
        #expect(first && !second, "a webhook key: once")
    }
}
