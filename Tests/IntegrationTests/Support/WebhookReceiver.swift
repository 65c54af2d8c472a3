import Foundation

/// A real HTTP and HTTPS webhook receiver of one test's own: `webhook_receiver.py` beside this
/// file (Python's standard library), which checks every request's Standard Webhooks signature
/// with its own HMAC, de-duplicates by `webhook-id`, answers as its failure script says, and
/// records every request as a JSON line. Started on free ports of 127.0.0.1; stopped (and its
/// folder removed) by `stop()` or when the value goes away.
final class WebhookReceiver: @unchecked Sendable {
    /// One answer of the failure script.
    enum Answer {
        /// Answer with `status`, and `Retry-After`, a body or other headers if given.
        case status(Int, retryAfter: String? = nil, body: String? = nil, headers: [String: String] = [:])
        /// Never answer: hold the connection until the receiver stops.
        case hang
        /// Close the connection without a word.
        case drop

        var json: Any {
            switch self {
            case .hang: return "hang"
            case .drop: return "drop"
            case .status(let status, let retryAfter, let body, let headers):
                var answer: [String: Any] = ["status": status, "headers": headers]
                if let retryAfter { answer["retry_after"] = retryAfter }
                if let body { answer["body"] = body }
                return answer
            }
        }
    }

    /// One request as the receiver saw it.
    struct Record: Decodable, Sendable {
        let seq: Int
        let received_at: Double
        let tls: Bool
        let port: Int
        let peer: String
        let method: String
        let path: String
        let headers: [String: String]
        let body: String
        let id: String?
        let timestamp: String?
        let signature: String?
        /// The signature matched the receiver's own HMAC of id, timestamp and body.
        let signature_ok: Bool
        /// The timestamp was within five minutes of the receiver's clock.
        let fresh: Bool
        let verified: Bool
        let verify_error: String?
        /// What it answered: the status, `hang` or `drop`.
        let answer: String
        /// The first verified 2xx for this id: the event's one delivery.
        let delivered: Bool
        /// A verified 2xx for an id already delivered.
        let duplicate: Bool
    }

    /// `http://127.0.0.1:PORT/hook`.
    let plainURL: String
    /// `https://localhost:PORT/hook` (the test certificate's name), when started with TLS.
    let tlsURL: String?
    /// The receiver's pid.
    let pid: Int32
    private let process: Process
    private let directory: URL
    /// The JSON lines file of the requests.
    private let records: URL
    /// The receiver's standard output and error.
    private let log: URL

    /// The script beside this file.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("webhook_receiver.py").path

    /// Starts a receiver that checks signatures against `secret` and answers `byID[id]`'s answers
    /// in turn for that id, else `sequence`'s in turn, else 200. With `tls`, an HTTPS listener
    /// too, with the test servers' certificate (or the given PEM certificate and key).
    init(secret: String, sequence: [Answer] = [], byID: [String: [Answer]] = [:], tls: Bool = true,
         certificate: (cert: String, key: String)? = nil) throws {
        let env = try TestEnvironment.require()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-receiver-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        records = directory.appendingPathComponent("records.jsonl")
        log = directory.appendingPathComponent("receiver.log")
        let ready = directory.appendingPathComponent("ready.json")
        let script: [String: Any] = ["sequence": sequence.map(\.json), "by_id": byID.mapValues { $0.map(\.json) }]
        let scriptText = String(decoding: try JSONSerialization.data(withJSONObject: script), as: UTF8.self)
        var arguments = [Self.script, "--secret", secret, "--records", records.path, "--ready", ready.path, "--script", scriptText]
        if tls {
            let pair = certificate ?? (env.caFile, (env.caFile as NSString).deletingLastPathComponent + "/key.pem")
            arguments += ["--cert", pair.cert, "--key", pair.key]
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? output.close()
        let deadline = Date().addingTimeInterval(15)
        var started: [String: Any]?
        while started == nil && process.isRunning && Date() < deadline {
            started = (try? Data(contentsOf: ready)).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            if started == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        pid = process.processIdentifier
        guard let started, let plain = started["plain_port"] as? Int else {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
            throw TestFailure("the webhook receiver did not start: \(text.suffix(1000))")
        }
        plainURL = "http://127.0.0.1:\(plain)/hook"
        tlsURL = (started["tls_port"] as? Int).map { "https://localhost:\($0)/hook" }
    }

    deinit { stop() }

    /// Every request so far, in the order received.
    func received() throws -> [Record] {
        let text = (try? String(contentsOf: records, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }
    }

    /// The receiver's log (its stderr): request lines and connection errors.
    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Stops the receiver (SIGTERM, then SIGKILL after 5 s) and removes its folder. Idempotent.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
