import Foundation

/// SpamAssassin (Debian's `spamassassin`) scoring a message the way a recipient's filter would,
/// with what can be run here: its local rules only (`-L`: no DNS blocklists, URI lookups, SPF or
/// DKIM queries — the machine has no network), no Bayes database (`use_bayes 0`: a database that
/// learns from earlier runs would make one run's score depend on the last), and preferences of its
/// own (an empty file, never the user's `~/.spamassassin`). `ALL_TRUSTED` counts nothing: here
/// every hop is 127.0.0.1, which SpamAssassin trusts and rewards with −1.0 — a credit a message
/// from the internet never gets, and one that would hide a point of real trouble.
enum SpamAssassin {
    /// One message's verdict: the total, and every rule that fired with its points.
    struct Score: CustomStringConvertible {
        let points: Double
        let rules: [(name: String, points: Double)]

        var description: String {
            String(format: "%.1f", points) + " (" + rules.map { "\($0.name) \(String(format: "%.1f", $0.points))" }.joined(separator: ", ") + ")"
        }
    }

    /// Whether SpamAssassin is installed (scripts/install-deps.sh installs it).
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/spamassassin") }

    /// Scores `raw` with `spamassassin -L -t` and reads its report: the line
    /// `Content analysis details: (N points, 5.0 required)` and the table of rules under it.
    static func score(_ raw: Data) throws -> Score {
        let prefs = FileManager.default.temporaryDirectory.appendingPathComponent("sn-sa-\(UUID().uuidString).prefs")
        try Data().write(to: prefs)
        defer { try? FileManager.default.removeItem(at: prefs) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/spamassassin")
        process.arguments = ["-L", "-t", "-x", "-p", prefs.path, "--cf=use_bayes 0", "--cf=score ALL_TRUSTED 0"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(raw)
        try input.fileHandleForWriting.close()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, let details = report.range(of: "Content analysis details:") else {
            throw TestFailure("spamassassin gave no report (exit \(process.terminationStatus)): \(stderr.suffix(500))")
        }
        let table = report[details.upperBound...]
        let summary = table.prefix { $0 != "\n" }
        guard let open = summary.firstIndex(of: "("), let total = Double(summary[summary.index(after: open)...].prefix { $0 != " " }) else {
            throw TestFailure("spamassassin's report has no total: \(summary)")
        }
        let rules = table.split(separator: "\n").compactMap { line -> (name: String, points: Double)? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let points = Double(fields[0]),
                  fields[1].allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" }) else { return nil }
            return (String(fields[1]), points)
        }
        return Score(points: total, rules: rules)
    }
}
