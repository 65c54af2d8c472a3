/// A rendered template: the subject line and the bodies, before MIME encoding.
package struct RenderedMail: Sendable, Equatable {
    /// One line of subject text.
    package let subject: String
    /// The plain-text body.
    package let text: String
    /// The HTML body, when the template folder has one.
    package let html: String?
}
