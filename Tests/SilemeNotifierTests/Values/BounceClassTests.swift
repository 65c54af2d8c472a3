import Testing
import Values

/// The one rule that says what a permanent refusal means for the address (`BounceClass`,
/// docs/bounces.md), for a relay's report and for our own SMTP dialogue alike.
@Suite("Bounce classes")
struct BounceClassTests {
    @Test("an enhanced code decides by its subject: 5.1 dead, 5.2 mailbox, 5.3 system, 5.4 routing, 5.5/5.6 protocol, 5.7 policy")
    func bySubject() {
        let cases: [(String, BounceClass)] = [
            ("5.1.1", .noSuchAddress), ("5.1.2", .noSuchAddress), ("5.1.3", .noSuchAddress), ("5.1.6", .noSuchAddress),
            ("5.1.10", .noSuchAddress), ("5.2.2", .mailbox), ("5.2.1", .mailbox), ("5.3.0", .system), ("5.3.4", .system),
            ("5.4.4", .routing), ("5.4.6", .routing), ("5.5.2", .protocol), ("5.6.1", .protocol), ("5.7.1", .policy),
            ("5.7.606", .policy), ("5.7.9", .policy), ("5.8.1", .other),
        ]
        for (status, expected) in cases {
            #expect(BounceClass.of(status: status, text: nil) == expected, "\(status)")
        }
    }

    @Test("the codes of the sender's address, a valid one and a non-compliant relay are not a dead recipient")
    func notTheRecipient() {
        for status in ["5.1.7", "5.1.8", "5.1.5", "5.1.9"] {
            #expect(BounceClass.of(status: status, text: "smtp; 550 \(status) Sender address rejected") != .noSuchAddress, "\(status)")
        }
        #expect(BounceClass.of(reply: "501 5.1.8 Sender address rejected: Domain not found") == .other)
    }

    @Test("the status decides over the words; without one, the reply's own enhanced code")
    func codeOverWords() {
        #expect(BounceClass.of(status: "5.7.1", text: "smtp; 550 5.7.1 Recipient address rejected: User unknown (spam)") == .policy)
        #expect(BounceClass.of(status: "5.1.1", text: "smtp; 550 5.1.1 rejected as spam") == .noSuchAddress)
        #expect(BounceClass.of(reply: "550 5.1.1 <a@b.example>: Recipient address rejected: User unknown in virtual mailbox table")
                == .noSuchAddress)
        #expect(BounceClass.of(reply: "550-5.1.1 The email account that you tried to reach does not exist.") == .noSuchAddress)
        #expect(BounceClass.of(reply: "552-5.2.2 The recipient's inbox is out of storage space") == .mailbox)
        #expect(BounceClass.of(reply: "554 5.4.4 Host or domain name not found") == .routing)
        #expect(BounceClass.of(reply: "550 5.7.1 Message rejected as spam") == .policy)
        #expect(BounceClass.of(reply: "554 5.1.2 Host unknown") == .noSuchAddress)
        #expect(BounceClass.of(status: nil, text: "smtp;550 5.1.1 <kijitora@example.jp>... User Unknown") == .noSuchAddress)
        #expect(BounceClass.of(reply: "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)") == .policy)
    }

    @Test("without a code that says more, 550/551/553 naming the recipient unknown is a dead address")
    func basicUnknown() {
        let dead = ["550 User unknown", "550 No such user here", "550 Requested action not taken: mailbox unavailable",
                    "553 <x@y.example>: no such mailbox", "551 User not local; please try <x@z.example>",
                    "550 Recipient address rejected: unknown user", "550 5.0.0 The mailbox does not exist",
                    "550 5.1.0 Address rejected: user not found", "550 Unrouteable address"]
        for reply in dead { #expect(BounceClass.of(reply: reply) == .noSuchAddress, "\(reply)") }
        // A DSN's `Status: 5.0.0` with only the provider's sentence (no basic code): the words decide.
        #expect(BounceClass.of(status: "5.0.0", text: "The email account that you tried to reach does not exist.") == .noSuchAddress)
    }

    @Test("a plain 550 with a spam or policy text is not dead; neither is an unknown user under another basic code")
    func basicNotDead() {
        let policy = ["550 Message rejected as spam", "550 Recipient rejected: blocked by policy",
                      "550 mailbox unavailable: your IP is listed at an RBL", "550 Recipient address rejected: Access denied",
                      "550 5.1.0 Sender denied", "554 5.0.0 Bad SPF records for example.org"]
        for reply in policy { #expect(BounceClass.of(reply: reply) == .policy, "\(reply)") }
        #expect(BounceClass.of(reply: "550 Mailbox full") == .mailbox)
        #expect(BounceClass.of(reply: "552 Requested mail action aborted: exceeded storage allocation") == .mailbox)
        #expect(BounceClass.of(reply: "550 user account is disabled") == .mailbox)
        #expect(BounceClass.of(reply: "554 no such user") == .other)
        #expect(BounceClass.of(reply: "554 Transaction failed") == .other)
        #expect(BounceClass.of(reply: "500 syntax") == .other)
        #expect(BounceClass.of(status: nil, text: nil) == .other)
    }

    @Test("only a dead address makes a contact undeliverable")
    func deadOnly() {
        #expect(BounceClass.allCases.filter(\.addressIsDead) == [.noSuchAddress])
    }
}
