import Foundation

/// The machine's fully qualified name as `hostname -f` prints it: the tests' independent oracle
/// for the notifier's default EHLO name.
public enum HostNameProbe {
    /// `hostname -f`, trimmed.
    public static func fullyQualified() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/hostname")
        process.arguments = ["-f"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
