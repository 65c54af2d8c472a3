import Curl
import Values

/// Something that hands a finished message to a mail server (SMTP through libcurl in production).
package protocol MailTransport {
    /// Sends `message` from `sender` to `recipient` and says what happened.
    func send(from sender: String, to recipient: String, message: [UInt8]) -> SendOutcome

    /// Hears `stop` and calls `onWait` while a send waits for the server (a run's sender wires
    /// both before its first message); a transport that never waits on a server ignores them.
    func hear(_ stop: StopSignal, onWait: @escaping @Sendable () -> Void)
}

extension SMTPTransport: MailTransport {}
