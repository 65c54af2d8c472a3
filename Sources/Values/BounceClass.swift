/// What a permanent refusal of one recipient says about the address — the one rule for both
/// places a refusal is read (docs/bounces.md): a relay's delivery report (DSN, its `Status` and
/// `Diagnostic-Code`) and a `5xx` reply during our own SMTP dialogue (`SendOutcome.saysNoSuchUser`).
///
/// Only `noSuchAddress` makes a contact undeliverable. A full mailbox, a spam or policy block, a
/// routing failure say that this message did not arrive, not that the person is gone: flagging a
/// live family member's address dead after one spam block is worse than missing a dead one, so
/// when in doubt a refusal is *not* a dead address.
package enum BounceClass: String, Sendable, Equatable, CaseIterable {
    /// The address does not exist: `5.1.x` (bad mailbox, bad domain, null MX), or, without an
    /// enhanced code that says more, a `550`/`551`/`553` whose text names the recipient unknown.
    case noSuchAddress = "no_such_address"
    /// The mailbox exists but takes nothing now: `5.2.x` (full, disabled, message too large for it).
    case mailbox
    /// The mail system at the destination: `5.3.x`.
    case system
    /// Routing or the network on the way: `5.4.x` (no route, loop, DNS).
    case routing
    /// The protocol or the content: `5.5.x` (a command refused), `5.6.x` (media, encoding).
    case `protocol`
    /// Refused by policy or as spam: `5.7.x`, or a plain reply whose text says so.
    case policy
    /// Anything else, among them the codes about the *sender's* address (`5.1.7`, `5.1.8`).
    case other

    /// Whether the refusal says the address is dead: the contact becomes undeliverable.
    package var addressIsDead: Bool { self == .noSuchAddress }

    /// The class of a permanent refusal whose enhanced status code is `status` (a DSN's `Status`,
    /// nil in the SMTP dialogue) and whose words are `text` (a DSN's `Diagnostic-Code`, or the
    /// server's reply, e.g. `550 5.1.1 <a@b>: Recipient address rejected: User unknown`) — pure.
    ///
    /// An enhanced code (RFC 3463) that says something decides by its subject: the status's, else
    /// the first one in the text. `X.0.0` and `X.1.0` say nothing beyond "failed" and "something
    /// about an address" (Exchange answers `5.1.0 Sender denied`), so the words decide then, as
    /// they do without any code: policy words first (`policyWords`), then mailbox words
    /// (`mailboxWords`), and only then the words of an unknown recipient (`unknownWords`) — and
    /// those only with the basic code `550`, `551` or `553`, or with none at all (a DSN's
    /// `Status: 5.0.0` with the provider's sentence alone).
    package static func of(status: String?, text: String?) -> BounceClass {
        let words = (text ?? "").lowercased()
        let tokens = tokens(words)
        let codes = (status.map { [Substring($0)] } ?? []) + tokens
        if let code = codes.lazy.compactMap(EnhancedCode.init).first(where: \.informative) { return code.bounceClass }
        if policyWords.contains(where: words.contains) { return .policy }
        if mailboxWords.contains(where: words.contains) { return .mailbox }
        let basic = tokens.first { $0.count == 3 && $0.allSatisfy(\.isNumber) && "2345".contains($0.first!) }
        if basic.map({ ["550", "551", "553"].contains($0) }) ?? true, unknownWords.contains(where: words.contains) { return .noSuchAddress }
        return .other
    }

    /// The class of a permanent reply in the SMTP dialogue (`550 5.7.1 …`): `of(status: nil, text: reply)`.
    package static func of(reply: String) -> BounceClass { of(status: nil, text: reply) }

    /// `text` cut at blanks and the separators of replies and diagnostics (`smtp;550-5.1.1`).
    private static func tokens(_ text: String) -> [Substring] {
        text.split { " \t-;:,()[]#'\"".contains($0) }
    }

    /// An enhanced status code, `class.subject.detail` (RFC 3463).
    struct EnhancedCode {
        let subject: Int
        let detail: Int

        /// Nil unless `token` is `2`, `4` or `5`, then two numbers of at most three digits, dotted.
        init?(_ token: some StringProtocol) {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, ["2", "4", "5"].contains(parts[0]), parts.dropFirst().allSatisfy({ (1...3).contains($0.count) }),
                  let subject = Int(parts[1]), let detail = Int(parts[2]) else { return nil }
            self.subject = subject
            self.detail = detail
        }

        /// Whether the code says more than "failed" (`X.0.0`) or "about an address" (`X.1.0`).
        var informative: Bool { subject != 0 && !(subject == 1 && detail == 0) }

        /// The class the subject names. Of `X.1.y` only the recipient's codes are a dead address —
        /// 1 bad mailbox, 2 bad system (domain), 3 bad mailbox syntax, 4 ambiguous, 6 moved with no
        /// forwarding address, 10 null MX (RFC 7505); 5 says the address is valid, 7 and 8 are about
        /// the sender's address (ours), 9 a relay to a non-compliant mailer: `other`.
        var bounceClass: BounceClass {
            switch subject {
            case 1: [1, 2, 3, 4, 6, 10].contains(detail) ? .noSuchAddress : .other
            case 2: .mailbox
            case 3: .system
            case 4: .routing
            case 5, 6: .protocol
            case 7: .policy
            default: .other
            }
        }
    }

    /// Words of a refusal by policy or as spam, lower-cased: they veto a dead address (a plain
    /// `550 Recipient rejected: spam` is a spam block, not an unknown recipient). Also the
    /// refusals to relay (qmail's `553 sorry, that domain isn't in my list of allowed rcpthosts`).
    static let policyWords = [
        "spam", "policy", "policies", "blocked", "block list", "blocklist", "blacklist", "denylist", "listed at", "rbl",
        "reputation", "denied", "not permitted", "prohibited", "not allowed", "junk", "virus", "malware", "spf", "dkim",
        "dmarc", "rate limit", "too many", "rcpthosts", "banned", "abuse", "suspicious",
    ]

    /// Words of a mailbox that exists but takes nothing now (full, over quota, disabled).
    static let mailboxWords = [
        "mailbox full", "mailbox is full", "inbox is full", "quota", "out of storage", "insufficient storage",
        "storage space", "exceeded storage", "mailbox disabled", "mailbox is disabled", "account disabled",
        "account is disabled", "inactive", "suspended",
    ]

    /// Words that name the recipient unknown, lower-cased: the usual texts of Postfix, Exim,
    /// sendmail, qmail, Exchange, Gmail, Yahoo and RFC 5321's own (`mailbox unavailable`,
    /// `user not local`).
    static let unknownWords = [
        "user unknown", "unknown user", "unknown recipient", "recipient unknown", "unknown mailbox", "mailbox unknown",
        "unknown address", "address unknown", "no such user", "no such mailbox", "no such recipient", "no such address",
        "no such account", "no mailbox", "does not exist", "doesn't exist", "not exist", "invalid recipient",
        "invalid mailbox", "invalid address", "recipient not found", "user not found", "mailbox not found",
        "address not found", "not a valid", "mailbox unavailable", "recipient address rejected", "recipient rejected",
        "unrouteable address", "user not local", "doesn't have a", "does not have a",
    ]
}
