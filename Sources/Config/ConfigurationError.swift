/// A configuration problem found before the program touches anything.
///
/// The description names the setting and says what is wrong, never the value of a secret.
/// Every configuration error ends the program with exit code 78 (`EX_CONFIG`).
package struct ConfigurationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The setting's name as operators write it (`SMTP_PORT`), or a file path for file errors.
    package let setting: String
    /// What is wrong, in words; contains the offending value only for non-secret settings.
    package let reason: String

    /// Creates an error for `setting`.
    package init(setting: String, reason: String) {
        self.setting = setting
        self.reason = reason
    }

    package var description: String { "configuration error: \(setting): \(reason)" }
}
