import Foundation
import Values

/// The bounce settings (`BOUNCE_*`, docs/bounces.md): the envelope sender that carries
/// each message's signed tag, the key that signs it, and the mailbox where the reports arrive.
///
/// A mail server's `250` says only that it took the message; a dead mailbox is reported minutes
/// later to the envelope sender. These settings say where that report goes and where it is read.
/// The key and the mailbox password never print themselves (`Secret`).
package struct BounceSettings: Sendable {
    /// Where the reports are read (`BOUNCE_MAILBOX`).
    package enum Mailbox: Sendable, Equatable, CustomStringConvertible {
        /// `maildir:/abs/path`: the local MTA delivers there (its `new/`, `cur/`, `tmp/`).
        case maildir(path: String)
        /// `imaps://user@host[:port]/FOLDER` (`imap://` on a loopback host only).
        case imap(Server)
        /// `pop3s://user@host[:port]` (`pop3://` on a loopback host only).
        case pop3(Server)

        /// The mailbox as the operator wrote it, without a password (there never is one in it).
        package var description: String {
            switch self {
            case .maildir(let path): "maildir:\(path)"
            case .imap(let server): server.url(scheme: "imap") + "/" + server.folder
            case .pop3(let server): server.url(scheme: "pop3")
            }
        }
    }

    /// An IMAP or POP3 server: where, as whom, and whether TLS protects it.
    package struct Server: Sendable, Equatable {
        /// The host name or address (an IPv6 address without brackets).
        package var host: String
        /// The TCP port (993/995 with TLS, 143/110 without, unless given).
        package var port: Int
        /// The login name.
        package var user: String
        /// `.tls` (implicit TLS, `imaps`/`pop3s`) or `.none` (loopback only).
        package var tls: TLSMode
        /// The IMAP folder (`INBOX` unless given); empty for POP3.
        package var folder: String

        /// Creates the value.
        package init(host: String, port: Int, user: String, tls: TLSMode, folder: String) {
            self.host = host
            self.port = port
            self.user = user
            self.tls = tls
            self.folder = folder
        }

        /// `scheme[s]://user@host:port` (the user percent-encoded, an IPv6 host in brackets).
        package func url(scheme: String) -> String {
            let login = user.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? user
            let name = host.contains(":") ? "[\(host)]" : host
            return "\(scheme)\(tls == .tls ? "s" : "")://\(login)@\(name):\(port)"
        }
    }

    /// `BOUNCE_ADDRESS`: the envelope sender's mailbox; each message is sent from `local+TAG@domain`.
    package var address: EmailAddress
    /// `BOUNCE_SECRET` (also `BOUNCE_SECRET_FILE`, credential `bounce-secret`): the HMAC key of the tags.
    package var secret: Secret
    /// `BOUNCE_MAILBOX`: where the reports are read.
    package var mailbox: Mailbox
    /// `BOUNCE_PASSWORD_FILE` (also `BOUNCE_PASSWORD`, credential `bounce-password`): the IMAP or
    /// POP3 password; nil for a Maildir.
    package var password: Secret?
    /// `BOUNCE_POLL_SECONDS`: how often the mailbox is read (default 60).
    package var pollSeconds: Int = 60
    /// `BOUNCE_CA_FILE`: a PEM bundle to verify the IMAP or POP3 server with instead of the
    /// system's store (a private mail server's own certificate authority); nil for a Maildir.
    package var caFile: String?

    /// Creates the settings.
    package init(address: EmailAddress, secret: Secret, mailbox: Mailbox, password: Secret? = nil) {
        self.address = address
        self.secret = secret
        self.mailbox = mailbox
        self.password = password
    }
}
