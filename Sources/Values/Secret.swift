/// A secret value (password, connection string with a password) that never prints itself.
///
/// `description` and `debugDescription` are redacted so that a secret interpolated into a log
/// line or error message by mistake shows `<redacted>` instead of its value.
package struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read it only where it is handed to a library.
    package let value: String

    /// Wraps `value`.
    package init(_ value: String) { self.value = value }

    package var description: String { "<redacted>" }
    package var debugDescription: String { "<redacted>" }
}
