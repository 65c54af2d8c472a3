/// A rendered template: the subject line and the bodies, before MIME encoding.
public struct RenderedMail: Sendable, Equatable {
    /// One line of subject text.
    public let subject: String
    /// The plain-text body.
    public let text: String
    /// The HTML body, when the template folder has one.
    public let html: String?
}
