/// Something that hands a finished message to a mail server (SMTP through libcurl in production).
package protocol MailTransport {
    /// Sends `message` from `sender` to `recipient` and says what happened.
    func send(from sender: String, to recipient: String, message: [UInt8]) -> SendOutcome
}

extension SMTPTransport: MailTransport {}
