/// The counts of a fuzz run — inputs tried, accepted, rejected by reason — and the failures found,
/// each described with the input that caused it.
struct FuzzTally {
    /// Inputs tried.
    private(set) var tried = 0
    /// Inputs the product accepted (a message was built and checked).
    private(set) var accepted = 0
    /// Inputs the product rejected, by reason (e.g. `invalid_email: missing @`).
    private(set) var rejected: [String: Int] = [:]
    /// Broken invariants, one line each.
    private(set) var failures: [String] = []
    /// Broken invariants by kind, with the first three examples of each kind.
    private(set) var failureKinds: [String: (count: Int, examples: [String])] = [:]

    /// Counts an input the product accepted.
    mutating func accept() {
        tried += 1
        accepted += 1
    }

    /// Counts an input the product rejected with `reason`.
    mutating func reject(_ reason: String) {
        tried += 1
        rejected[reason, default: 0] += 1
    }

    /// Records a broken invariant of kind `kind` (a short fixed label), with details, for `input`.
    mutating func fail(_ kind: String, _ detail: String, input: String) {
        let line = "\(kind): \(detail) — input \(input)"
        failures.append(line)
        var entry = failureKinds[kind] ?? (0, [])
        entry.count += 1
        if entry.examples.count < 3 { entry.examples.append(line) }
        failureKinds[kind] = entry
    }

    /// For each kind of broken invariant: the count and the first examples.
    var failureReport: String {
        failureKinds.sorted { $0.key < $1.key }
            .map { "\($0.value.count)× \($0.key), e.g.\n      " + $0.value.examples.joined(separator: "\n      ") }
            .joined(separator: "\n")
    }

    /// Total rejected inputs.
    var rejectedCount: Int { rejected.values.reduce(0, +) }

    /// Several lines: the totals and the rejections by reason, most frequent first.
    var summary: String {
        let reasons = rejected.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "    \($0.value)\t\($0.key)" }
        let kinds = failureKinds.sorted { $0.key < $1.key }.map { "    \($0.value.count)\tFAILED \($0.key)" }
        return (["tried \(tried), accepted \(accepted), rejected \(rejectedCount), broken invariants \(failures.count)"]
                + reasons + kinds).joined(separator: "\n")
    }
}
