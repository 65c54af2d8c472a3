/// A failure setting up mail (libcurl, templates), as opposed to a message the server refused.
public struct MailError: Error, CustomStringConvertible, Sendable {
    /// What went wrong; never contains the SMTP password.
    public let message: String

    /// Creates an error.
    public init(message: String) { self.message = message }

    public var description: String { message }
}
