/// What happened to one message handed to the mail server.
public enum SendOutcome: Sendable, Equatable {
    /// The server answered 2xx after DATA: delivered (`email_sent = true`).
    case accepted(reply: String)
    /// Worth trying again: a 4xx reply, or no usable server (refused, TLS, timeout, AUTH);
    /// `serverUnavailable` is true for the latter, which says nothing about the recipient.
    case transient(reason: String, serverUnavailable: Bool)
    /// The server refused this message for good (5xx): recorded with its reply.
    case permanent(reply: String)

    /// The reply or reason in words.
    public var text: String {
        switch self {
        case .accepted(let reply), .permanent(let reply): reply
        case .transient(let reason, _): reason
        }
    }

    /// Classifies a libcurl result as ENGINEERING.md's table says: curl code 0 is delivered; a
    /// send/reply error (55, 8, 67) carrying a 4xx reply is transient, a 5xx one permanent; any other
    /// code is a transport, TLS or configuration problem (transient, server unavailable).
    /// Never judged by the reply code alone: after a STARTTLS failure it is a stale 250.
    public static func classify(curlCode: Int, responseCode: Int, reply: String?, curlMessage: String) -> SendOutcome {
        let replyText = reply ?? "\(responseCode)"
        if curlCode == 0 { return .accepted(reply: reply ?? "250") }
        let replyErrors: Set<Int> = [8, 55, 56]  // weird server reply, send error, recv error after a reply
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
