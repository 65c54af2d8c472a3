/// A deterministic random number generator (SplitMix64) for property and fuzz tests: the same seed
/// gives the same sequence on every machine and Swift version, so a failure reproduces from the
/// seed the test prints.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    /// The seed this generator started from.
    public let seed: UInt64
    private var state: UInt64

    /// Starts the sequence of `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly chosen element of `items` (which must not be empty).
    public mutating func pick<T>(_ items: [T]) -> T {
        items[Int.random(in: 0..<items.count, using: &self)]
    }

    /// True with probability `percent` / 100.
    public mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &self) < percent
    }
}
