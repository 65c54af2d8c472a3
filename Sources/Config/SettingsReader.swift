import Foundation

/// Typed reads of raw `KEY=VALUE` settings, each failure naming its key.
package struct SettingsReader {
    package let values: [String: String]

    /// The raw text, trimmed; nil when unset.
    package func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = values[key] else { return nil }
        // By scalar: "\r\n" is one Character, equal to neither "\r" nor "\n".
        guard !value.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\0" }) else {
            throw ConfigurationError(setting: key, reason: "must be a single line")
        }
        return value.trimmingCharacters(in: .whitespaces)
    }

    /// An integer within `range`; nil when unset or empty.
    package func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let text = try string(key), !text.isEmpty else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(setting: key, reason: "must be a whole number from \(range.lowerBound) to \(range.upperBound) (got \"\(text)\")")
        }
        return value
    }

    /// A decimal number within `range`; nil when unset or empty.
    package func number(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let text = try string(key), !text.isEmpty else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw ConfigurationError(setting: key, reason: "must be a number from \(range.lowerBound) to \(range.upperBound) (got \"\(text)\")")
        }
        return value
    }

    /// The path of a readable PEM bundle holding at least one certificate; nil when unset or empty.
    package func certificateFile(_ key: String) throws(ConfigurationError) -> String? {
        guard let path = try string(key), !path.isEmpty else { return nil }
        return try Self.certificateFile(path, setting: key)
    }

    /// `path` when it is a readable PEM bundle holding at least one certificate; else the refusal
    /// names `setting`.
    package static func certificateFile(_ path: String, setting key: String) throws(ConfigurationError) -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
              let pem = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(setting: key, reason: "cannot read \(path)")
        }
        guard String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw ConfigurationError(setting: key, reason: "\(path) holds no PEM certificate")
        }
        return path
    }

    /// A duration within `range` written as a whole number with its unit (`45s`, `90m`, `3h`,
    /// `2d`), or `0` (with a unit or without) for `.zero`; nil when unset or empty. A bare number
    /// other than 0 is refused rather than guessed at: "90" could mean minutes to one operator and
    /// seconds to another.
    package func duration(_ key: String, in range: ClosedRange<Duration>) throws(ConfigurationError) -> Duration? {
        guard let text = try string(key), !text.isEmpty else { return nil }
        return try Self.duration(text, setting: key, in: range)
    }

    /// `text` read as `duration(_:in:)` says; a refusal names `setting`.
    package static func duration(_ text: String, setting key: String, in range: ClosedRange<Duration>) throws(ConfigurationError) -> Duration {
        func words(_ duration: Duration) -> String {
            let seconds = duration.components.seconds
            for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds >= size && seconds % size == 0 {
                return "\(seconds / size)\(unit)"
            }
            return "\(seconds)s"
        }
        let bounds = "from \(words(range.lowerBound)) to \(words(range.upperBound))"
        if text.allSatisfy({ $0 == "0" }) {
            guard range.contains(.zero) else { throw ConfigurationError(setting: key, reason: "must be \(bounds) (got \"\(text)\")") }
            return .zero
        }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[Character($0.lowercased())] }), text.count > 1,
              text.dropLast().allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(text.dropLast()) else {
            throw ConfigurationError(setting: key, reason: "must be a whole number with a unit s, m, h or d, such as 45s, 90m or 3h, "
                                     + "\(bounds) (got \"\(text)\")")
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: unit)
        guard !overflow, range.contains(.seconds(seconds)) else {
            throw ConfigurationError(setting: key, reason: "must be \(bounds) (got \"\(text)\")")
        }
        return .seconds(seconds)
    }

    /// `on` or `off` (case-insensitive); nil when unset or empty.
    package func onOff(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let text = try string(key), !text.isEmpty else { return nil }
        switch text.lowercased() {
        case "on": return true
        case "off": return false
        default: throw ConfigurationError(setting: key, reason: "must be on or off (got \"\(text)\")")
        }
    }
}
