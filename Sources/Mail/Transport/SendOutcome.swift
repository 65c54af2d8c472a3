import Values

/// What happened to one message handed to the mail server.
package enum SendOutcome: Sendable, Equatable {
    /// The server answered 2xx after DATA: delivered (`email_sent = true`).
    case accepted(reply: String)
    /// Worth trying again: a 4xx reply, or no usable server (refused, TLS, timeout, AUTH);
    /// `serverUnavailable` is true for the latter, which says nothing about the recipient.
    case transient(reason: String, serverUnavailable: Bool)
    /// The server refused this message for good (5xx): recorded with its reply.
    case permanent(reply: String)
    /// The whole message went out but no final reply came (the connection dropped, a timeout):
    /// the server may have accepted it. Not retried within the run — that could deliver it twice
    /// at once — but recorded `retry` for a later pass, which sends it again with the same
    /// `Message-ID` (at least once).
    case unknown(reason: String)

    /// The reply or reason in words.
    package var text: String {
        switch self {
        case .accepted(let reply), .permanent(let reply): reply
        case .transient(let reason, _), .unknown(let reason): reason
        }
    }

    /// True for a permanent refusal that says the recipient does not exist ("no such user"), by
    /// the rule the bounce reader follows for a relay's reports (`BounceClass`, docs/bounces.md):
    /// `5.1.x`, or a `550`/`551`/`553` whose text names the recipient unknown. A `5.7.1` policy
    /// refusal or a `5.2.2` full mailbox is not one: the contact stays in use.
    package var saysNoSuchUser: Bool {
        guard case .permanent(let reply) = self else { return false }
        return BounceClass.of(reply: reply).addressIsDead
    }

    /// Whether libcurl's message says the server refused before any recipient was named: the
    /// greeting ("Got unexpected smtp-server response"), `EHLO`/`HELO` ("Remote access denied") or
    /// `MAIL FROM` ("MAIL failed") — libcurl 7.88's words in `smtp.c`; `RCPT failed` and `DATA
    /// failed` are the recipient's and the message's.
    static func refusedBeforeRecipients(curlMessage: String) -> Bool {
        ["MAIL failed", "Got unexpected smtp-server response", "Remote access denied"].contains { curlMessage.hasPrefix($0) }
    }

    /// Whether a relay that gave this outcome could not take the message for reasons of its own
    /// (unreachable, TLS, AUTH, `421`, a refused session or `MAIL FROM`), so that another relay may:
    /// never for an accepted message, a refused recipient or message, or one whose outcome is
    /// unknown (the relay may have taken it: sent elsewhere it could arrive twice).
    package var isRelayFailure: Bool {
        if case .transient(_, true) = self { true } else { false }
    }

    /// Classifies a libcurl result as docs/delivery.md's classification table says: curl code 0 is delivered; a
    /// send/reply error (55, 8, 67) carrying a 4xx reply is transient, a 5xx one permanent; any other
    /// code is a transport, TLS or configuration problem (transient, server unavailable). A refusal
    /// that is the relay's rather than the message's — `421` at any step, or any refusal of the
    /// session's greeting, of `EHLO` or of `MAIL FROM` — is transient with the server unavailable
    /// too: it would refuse every message now, and another relay (`SMTP_FALLBACK`) or a later pass
    /// may take it. Only a refusal of the recipient (`RCPT`) or of the message (`DATA`, its final
    /// reply) says anything about this message.
    /// Never judged by the reply code alone: after a STARTTLS failure it is a stale 250.
    ///
    /// `messageHandedOver` says the whole message went out after `354`: a failure with no final
    /// reply then (the connection dropped, a timeout) is `unknown` — the server may have accepted it.
    package static func classify(curlCode: Int, responseCode: Int, reply: String?, curlMessage: String,
                                messageHandedOver: Bool = false) -> SendOutcome {
        let replyText = reply ?? "\(responseCode)"
        if curlCode == 0 { return .accepted(reply: reply ?? "250") }
        if messageHandedOver && !(400..<600).contains(responseCode) {
            return .unknown(reason: "outcome unknown: no reply after the message was sent (curl error \(curlCode): \(curlMessage)); "
                            + "it will be sent again later with the same Message-ID")
        }
        let replyErrors: Set<Int> = [8, 55, 56]  // weird server reply, send error, recv error after a reply
        if replyErrors.contains(curlCode), (400..<600).contains(responseCode),
           responseCode == 421 || refusedBeforeRecipients(curlMessage: curlMessage) {
            // The relay's, not the message's: it would refuse any message now.
            return .transient(reason: replyText, serverUnavailable: true)
        }
        if replyErrors.contains(curlCode) || curlCode == 67 {
            switch responseCode {
            case 500..<600 where curlCode != 67: return .permanent(reply: replyText)
            case 400..<600: return .transient(reason: replyText, serverUnavailable: curlCode == 67)
            default: break
            }
        }
        return .transient(reason: "curl error \(curlCode): \(curlMessage)", serverUnavailable: true)
    }
}
