import Foundation

/// Reads back what a process wrote to the running journald (`journalctl -o json _PID=…`).
enum JournalReader {
    /// Every entry of process `pid`, as field → value; waits up to `timeout` seconds for at least
    /// `minimum` entries (journald may lag a moment behind the writer).
    static func entries(pid: Int32, minimum: Int = 1, timeout: TimeInterval = 10) throws -> [[String: String]] {
        try entries(pid: pid, during: nil, minimum: minimum, timeout: timeout)
    }

    /// Every entry that the finished process `result` wrote: of its pid, and received while it ran
    /// (another process with the same pid, before or after, is left out).
    static func entries(of result: NotifierProcess.Result, minimum: Int = 1, timeout: TimeInterval = 10) throws -> [[String: String]] {
        try entries(pid: result.pid, during: result.started.map { $0.addingTimeInterval(-0.5)...result.finished.addingTimeInterval(1) },
                    minimum: minimum, timeout: timeout)
    }

    private static func entries(pid: Int32, during window: ClosedRange<Date>?, minimum: Int, timeout: TimeInterval) throws -> [[String: String]] {
        let deadline = Date().addingTimeInterval(timeout)
        var entries: [[String: String]] = []
        repeat {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/journalctl")
            process.arguments = ["-o", "json", "--no-pager", "_PID=\(pid)"]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            entries = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                return object.compactMapValues { value in
                    if let text = value as? String { return text }
                    if let bytes = value as? [UInt8] { return String(decoding: bytes, as: UTF8.self) }
                    if let numbers = value as? [NSNumber] { return String(decoding: numbers.map { $0.uint8Value }, as: UTF8.self) }
                    return nil
                }
            }
            if let window {
                entries = entries.filter { entry in
                    guard let micros = entry["__REALTIME_TIMESTAMP"].flatMap(Double.init) else { return false }
                    return window.contains(Date(timeIntervalSince1970: micros / 1_000_000))
                }
            }
            if entries.count >= minimum { break }
            Thread.sleep(forTimeInterval: 0.2)
        } while Date() < deadline
        return entries
    }
}
