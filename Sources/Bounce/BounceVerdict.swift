/// What a message in the bounce mailbox is, as pure functions of its parts: each
/// rule a named function, so that a test states it without a mailbox.
///
/// The order matters and is the spec's: a complaint (RFC 5965) or a delivery report (RFC 3464) is
/// read as such even though MTAs mark their reports `Auto-Submitted: auto-replied` (Postfix,
/// Exchange and Google all do); only a message that is neither can be an automatic reply; and a
/// provider's text-only bounce (`X-Failed-Recipients`, from `MAILER-DAEMON`) is never taken for an
/// out-of-office reply, since that would drop a dead address unseen — it stays unparsed, for a person.
package enum BounceVerdict {
    /// The verdict of a report whose recipient blocks are `recipients`: permanent when any is,
    /// else transient when any is, else delivered when any is; unparsed when none can be read
    /// (a report with no blocks, or blocks without an `Action` or `Status` one can act on).
    package static func report(_ recipients: [BounceReport.Recipient]) -> BounceReport.Verdict {
        let verdicts = recipients.map(recipient)
        for kind in [BounceReport.Verdict.permanent, .transient, .delivered] where verdicts.contains(kind) { return kind }
        return .unparsed
    }

    /// One recipient block: `failed` with a `5.x.x` status is permanent; `failed` with `4.x.x`
    /// (a retry that gave up) and `delayed` are transient; `delivered`, `relayed` and `expanded`
    /// are delivered; anything else (no action, an unknown one, `failed` without a status) is
    /// unparsed — acting on a guess could mark a live address dead.
    package static func recipient(_ block: BounceReport.Recipient) -> BounceReport.Verdict {
        let statusClass = block.status?.first
        switch block.action {
        case "failed":
            return statusClass == "5" ? .permanent : statusClass == "4" ? .transient : .unparsed
        case "delayed":
            return .transient
        case "delivered", "relayed", "expanded":
            return .delivered
        default:
            return .unparsed
        }
    }

    /// Whether a message that is not a report is an automatic reply: `Auto-Submitted:
    /// auto-replied` (RFC 3834), the vendors' markers (`X-Autoreply`, `X-Autorespond`,
    /// `Precedence: auto_reply`, Exchange's `X-Auto-Response-Suppress` with an automatic-reply
    /// subject), or a subject that says so — unless it looks like a bounce (`bounceMarkers`).
    package static func isAutoReply(_ fields: MIMEFields) -> Bool {
        guard !hasBounceMarkers(fields) else { return false }
        if fields["auto-submitted"]?.lowercased().hasPrefix("auto-replied") == true { return true }
        if fields["x-autoreply"] != nil || fields["x-autorespond"] != nil { return true }
        if fields["precedence"]?.lowercased().trimmed == "auto_reply" { return true }
        let subject = (fields["subject"] ?? "").lowercased()
        return autoReplySubjects.contains { subject.hasPrefix($0) || subject.contains(" \($0)") }
    }

    /// Signs of a bounce that is not an RFC 3464 report: `X-Failed-Recipients` (Exim, Gmail's
    /// old form), or a sender that is a mail system (`MAILER-DAEMON`, `postmaster`).
    package static func hasBounceMarkers(_ fields: MIMEFields) -> Bool {
        if fields["x-failed-recipients"] != nil { return true }
        let from = (fields["from"] ?? "").lowercased()
        return from.contains("mailer-daemon@") || from.contains("postmaster@") || from.contains("<mailer-daemon>")
    }

    /// Subject beginnings of automatic replies, lower-cased (Exchange/Outlook, Gmail, Apple, and
    /// the common Chinese ones).
    static let autoReplySubjects = [
        "automatic reply:", "auto reply:", "auto-reply:", "autoreply:", "out of office", "out of the office",
        "自动回复", "自動回覆", "自动答复",
    ]
}
