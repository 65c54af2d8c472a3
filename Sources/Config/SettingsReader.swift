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
