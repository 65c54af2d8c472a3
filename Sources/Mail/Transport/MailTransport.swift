import Curl
import Values

/// Something that hands a finished message to a mail server (SMTP through libcurl in production).
package protocol MailTransport {
    /// Sends `message` from `sender` to `recipient` and says what happened.
    func send(from sender: String, to recipient: String, message: [UInt8]) -> SendOutcome

    /// Hears `stop` and calls `onWait` while a send waits for the server (a run's sender wires
    /// both before its first message); a transport that never waits on a server ignores them.
    func hear(_ stop: StopSignal, onWait: @escaping @Sendable () -> Void)

    /// The relay that answered the last `send` (its URL: the row records who accepted a mail);
    /// nil for a transport that hands mail to no relay (the outbox).
    var relay: String? { get }

    /// The relays the last `send` passed over, each having failed as a relay (`SMTP_FALLBACK`):
    /// counted per relay for the metrics.
    var passedOver: [String] { get }
}

extension MailTransport {
    package var relay: String? { nil }
    package var passedOver: [String] { [] }
}

extension SMTPTransport: MailTransport {
    package var relay: String? { settings.url }
}
