import Values

/// What one message in the bounce mailbox says, read from its raw bytes: its kind
/// (`verdict`), the per-recipient delivery status of an RFC 3464 report, and the two keys that
/// find the delivery row — the addresses the report was sent to (where the VERP tag is) and the
/// returned message's `Message-ID`.
///
/// Reading is pure and never throws: a message that is not a report this reader understands is
/// `.unparsed` (kept in the mailbox and counted, never deleted). `BounceVerdict` decides the
/// kind; this type only gathers the facts it decides on.
package struct BounceReport: Sendable, Equatable {
    /// What kind of message it is, and so what it may change.
    package enum Verdict: String, Sendable, Equatable, CaseIterable {
        /// A delivery report of a permanent failure (`Action: failed`, `Status: 5.x.x`): the mail
        /// did not arrive; the address is dead only when its class says so (`Recipient.bounceClass`).
        case permanent
        /// A delivery report of a delay or a temporary failure (`Action: delayed`, or `4.x.x`):
        /// noted, nothing more.
        case transient
        /// A delivery report of success (`delivered`, `relayed`, `expanded`): changes nothing.
        case delivered
        /// An automatic reply (out of office, RFC 3834): changes nothing.
        case autoReply = "auto-reply"
        /// An abuse or spam complaint (RFC 5965 `feedback-report`): recorded.
        case complaint
        /// Anything else, including a provider's text-only bounce: kept for a person, counted.
        case unparsed
        /// Larger than `BounceReport.maximumBytes`: not read, kept, counted.
        case tooLarge = "too-large"
    }

    /// One recipient's block of a `message/delivery-status` part (RFC 3464 §2.3).
    package struct Recipient: Sendable, Equatable {
        /// `Final-Recipient`'s address (the address type and angle brackets removed).
        package var finalRecipient: String?
        /// `Original-Recipient`'s address, when given.
        package var originalRecipient: String?
        /// `Action`'s first word, lower-cased: failed, delayed, delivered, relayed, expanded.
        package var action: String?
        /// `Status`'s code, `class.subject.detail` (a comment after it removed).
        package var status: String?
        /// `Diagnostic-Code`, blanks collapsed, at most `maximumDiagnostic` characters.
        package var diagnostic: String?

        /// The address this block is about: the final recipient, else the original one.
        package var address: String? { finalRecipient ?? originalRecipient }

        /// What the failure says about the address (`BounceClass`, the rule the SMTP dialogue's
        /// refusals follow too): only `noSuchAddress` makes the contact undeliverable.
        package var bounceClass: BounceClass { .of(status: status, text: diagnostic) }

        /// Creates the value.
        package init(finalRecipient: String? = nil, originalRecipient: String? = nil, action: String? = nil, status: String? = nil,
                     diagnostic: String? = nil) {
            self.finalRecipient = finalRecipient
            self.originalRecipient = originalRecipient
            self.action = action
            self.status = status
            self.diagnostic = diagnostic
        }
    }

    /// The header that carries a canary's signed tag (docs/operating.md, "The canary").
    package static let canaryHeader = "X-Sileme-Canary"
    /// The largest message read (1 MiB): a report of one of our small alerts, with the alert
    /// returned, is a few kilobytes; a larger message is counted, not read into memory.
    package static let maximumBytes = 1 << 20
    /// The most characters of a diagnostic kept.
    package static let maximumDiagnostic = 500

    /// The kind of message.
    package var verdict: Verdict
    /// The recipient blocks of a delivery report, in order; empty for any other kind.
    package var recipients: [Recipient]
    /// The `Message-ID` of the returned message or headers (angle brackets removed), when there is one.
    package var returnedMessageID: String?
    /// The addresses the report was sent to, most trustworthy first: `X-Original-To`, `Delivered-To`,
    /// `Envelope-To`, then `To` — where the VERP tag is looked for.
    package var addressedTo: [String]
    /// The `Feedback-Type` of a complaint (`abuse`, `fraud`, …).
    package var feedbackType: String?
    /// The message's own `X-Sileme-Canary` (not a returned message's): the signed tag of a canary
    /// that came back (docs/operating.md, "The canary"); nil on any other message.
    package var canaryTag: String?

    /// Creates the value.
    package init(verdict: Verdict, recipients: [Recipient] = [], returnedMessageID: String? = nil, addressedTo: [String] = [],
                 feedbackType: String? = nil, canaryTag: String? = nil) {
        self.canaryTag = canaryTag
        self.verdict = verdict
        self.recipients = recipients
        self.returnedMessageID = returnedMessageID
        self.addressedTo = addressedTo
        self.feedbackType = feedbackType
    }

    /// The recipient block that decided the verdict: the first with the verdict's kind (for a
    /// permanent failure, the first permanent one).
    package var decidingRecipient: Recipient? {
        recipients.first { BounceVerdict.recipient($0) == verdict } ?? recipients.first
    }
}
