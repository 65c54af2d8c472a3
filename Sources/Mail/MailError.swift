/// A failure setting up mail (libcurl, templates), as opposed to a message the server refused.
package struct MailError: Error, CustomStringConvertible, Sendable {
    /// What went wrong; never contains the SMTP password.
    package let message: String

    /// Creates an error.
    package init(message: String) { self.message = message }

    package var description: String { message }
}
