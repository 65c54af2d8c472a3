import Foundation
import Values

/// One message to send: its kind, the user it is about, the contact it goes to, and the numbers
/// its template shows. Delivery state is kept per (user, date, kind, channel, contact)
/// (docs/delivery.md), so every job is claimed, sent and recorded on its own.
package struct DeliveryJob: Sendable {
    /// What the message says (`notification_logs.kind`).
    package enum Kind: String, Sendable, CaseIterable, Comparable {
        /// The user missed the threshold's days: the contact is asked to check on them.
        case alert
        /// The user checked in after an accepted alert: threaded under it.
        case allClear = "all_clear"
        /// The streak is still open `FOLLOW_UP_DAYS` after the alert: threaded under it.
        case followUp = "follow_up"
        /// The contact was named for the first time: who named them, what will come.
        case introduction
        /// The first missed day (`USER_REMINDER`): for the app to remind the user. Webhook only.
        case reminder
        /// Another contact acknowledged the alert on the acknowledgement page ("I'm on it", docs/acknowledgement.md):
        /// every other contact that got the alert is told, threaded under it.
        case acknowledged
        /// A mail to the contact bounced for good (docs/bounces.md): the app is told. Webhook only.
        case undeliverable
        /// Nobody heard the alert `ESCALATE_AFTER` after it went out (docs/escalation.md): each
        /// first-tier contact is told nobody has said they are going, threaded under the alert.
        case escalation
        /// Nobody heard it after the escalation either: for the operator (webhook only, like the reminder).
        case unheard
        /// The contact who went said "They're OK": every other contact is told, threaded under the alert.
        case outcomeOK = "outcome_ok"
        /// The contact who went said "I couldn't reach them": every other contact is told, threaded.
        case outcomeUnreachable = "outcome_unreachable"

        /// The order kinds are listed in.
        package static func < (lhs: Kind, rhs: Kind) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }

        /// The kinds sent by mail (every kind but those for the app alone).
        package static let mailed: [Kind] = allCases.filter { !$0.forAppOnly }

        /// The kinds that answer an alert: dated with the alert's date, threaded under its
        /// `Message-ID` (`In-Reply-To`, `References`).
        package static let threaded: Set<Kind> = [.allClear, .followUp, .acknowledged, .escalation, .outcomeOK, .outcomeUnreachable]

        /// Whether only the app's channels carry this kind (`Channel.Audience.app`): the reminder
        /// (for the app to remind the user), the undeliverable contact (for the app to ask for
        /// another address) and `unheard` (for the operator).
        package var forAppOnly: Bool { self == .reminder || self == .undeliverable || self == .unheard }

        /// Whether an app's event of this kind is one per contact (its delivery key names the
        /// contact it is about), not one per event about the user.
        package var keyedByContact: Bool { self == .introduction || self == .undeliverable }

        /// The webhook event of this kind (its `type`).
        package var webhookEventType: WebhookEventType {
            switch self {
            case .alert: .alert
            case .allClear: .allClear
            case .followUp: .followUp
            case .introduction: .introduction
            case .reminder: .reminder
            case .acknowledged: .acknowledged
            case .undeliverable: .undeliverable
            case .escalation: .escalated
            case .unheard: .unheard
            case .outcomeOK, .outcomeUnreachable: .outcome
            }
        }
    }

    /// What the message says.
    package let kind: Kind
    /// How it travels.
    package let channel: Channel
    /// `users.id`.
    package let userID: String
    /// The cleaned name.
    package let name: DisplayName
    /// The validated contact address: the mail's recipient; on the webhook, the contact an
    /// introduction is about, else the user's first contact.
    package let email: EmailAddress
    /// Every valid contact of the user in serving order (a webhook event's `contacts`; empty on
    /// mail jobs, which name their one contact).
    package let contacts: [Evaluation.Contact]
    /// The contact's position (1 for `users.emergency_email`).
    package let position: Int
    /// The row's `notification_date`: the run date for an alert and an introduction, the alert's
    /// date for an all-clear and a follow-up (so there is one per streak and contact); nil means
    /// the run date.
    package let notificationDate: CalendarDate?
    /// `m` (of the alert, for an all-clear; today's, for a follow-up).
    package let missedDays: Int
    /// `L`.
    package let lastCheckIn: CalendarDate
    /// The end of a pause the missed days are counted from (`L' = paused_until > L`); nil when
    /// they are counted from `L`. The mail says what happened.
    package let pausedUntil: CalendarDate?
    /// The alert's `Message-ID` an all-clear or a follow-up answers (`In-Reply-To`, `References`).
    package let inReplyTo: String?
    /// When the check-in that ended the streak came (an all-clear), and its date.
    package let checkedIn: (at: Date, date: CalendarDate)?
    /// Who acknowledged the alert and when (an `acknowledged` notice): the contact's address as
    /// the delivery key holds it (trimmed, lower-cased), shown masked.
    package let acknowledgement: (contact: String, at: Date)?
    /// Who said how it ended and when (an outcome notice): the contact's address as the delivery
    /// key holds it, shown masked.
    package let outcome: (contact: String, at: Date)?
    /// The bounce an `undeliverable` event reports.
    package let bounce: Bounce?
    /// Where each contact stands in the streak (a `checkin.escalated` or `notifier.unheard`
    /// event lists it): read with the event, empty for every other job.
    package var streakContacts: [EscalationRule.Contact] = []
    /// The languages the rows name for the recipient (docs/languages.md): the mail is written in
    /// the contact's, else the user's, else the service's default.
    package var languages = Languages()

    /// `emergency_contacts.language` and `users.language` as stored (BCP 47 tags, or anything the
    /// app wrote: a text that is not a tag falls back and is reported, never skipped).
    package struct Languages: Sendable, Equatable {
        /// The contact's.
        package var contact: String?
        /// The user's.
        package var user: String?

        /// Creates the value.
        package init(contact: String? = nil, user: String? = nil) {
            self.contact = contact
            self.user = user
        }
    }

    /// A mail's permanent bounce, as an `undeliverable` event reports it (docs/bounces.md).
    package struct Bounce: Sendable, Equatable {
        /// The kind of the mail that bounced (`alert`, `all_clear`, …).
        package var kind: Kind
        /// That mail's `Message-ID`.
        package var messageID: String?
        /// The report's status code (`5.1.1`).
        package var status: String?
        /// The report's diagnostic.
        package var diagnostic: String?
        /// When the report was read.
        package var at: Date

        /// Creates the value.
        package init(kind: Kind, messageID: String?, status: String?, diagnostic: String?, at: Date) {
            self.kind = kind
            self.messageID = messageID
            self.status = status
            self.diagnostic = diagnostic
            self.at = at
        }
    }

    /// `L'`: the day the missed days are counted from (the claim re-checks against it).
    package var countedFrom: CalendarDate { pausedUntil ?? lastCheckIn }

    /// The contact as the delivery key holds it: the address, lower-cased; '' for an app's event
    /// about the user (one per event, whatever the contacts), the contact's address for an event
    /// about one contact (an introduction: one per contact).
    package var contactKey: String {
        channel.audience == .app && !kind.keyedByContact ? "" : email.address.lowercased()
    }

    /// Who the row names as its recipient (`recipient_masked`): the masked address, or the app's
    /// channel's name (`Channel.recipientMasked`).
    package var recipientMasked: String { channel.recipientMasked(email) }

    /// The row's date on `runDate`.
    package func date(runDate: CalendarDate) -> CalendarDate { notificationDate ?? runDate }

    /// Creates the value.
    package init(kind: Kind = .alert, channel: Channel = .email, userID: String, name: DisplayName, email: EmailAddress,
                 position: Int = 1, contacts: [Evaluation.Contact] = [],
                 notificationDate: CalendarDate? = nil, missedDays: Int, lastCheckIn: CalendarDate,
                 pausedUntil: CalendarDate? = nil, inReplyTo: String? = nil, checkedIn: (at: Date, date: CalendarDate)? = nil,
                 acknowledgement: (contact: String, at: Date)? = nil, outcome: (contact: String, at: Date)? = nil,
                 bounce: Bounce? = nil) {
        self.kind = kind
        self.channel = channel
        self.contacts = contacts
        self.userID = userID
        self.name = name
        self.email = email
        self.position = position
        self.notificationDate = notificationDate
        self.missedDays = missedDays
        self.lastCheckIn = lastCheckIn
        self.pausedUntil = pausedUntil
        self.inReplyTo = inReplyTo
        self.checkedIn = checkedIn
        self.acknowledgement = acknowledgement
        self.outcome = outcome
        self.bounce = bounce
    }

    /// This event's twin on the webhook: the same facts, with the user's `contacts`.
    package func onWebhook(contacts: [Evaluation.Contact]) -> DeliveryJob {
        var twin = DeliveryJob(kind: kind, channel: .webhook, userID: userID, name: name, email: email, position: position,
                               contacts: contacts, notificationDate: notificationDate, missedDays: missedDays, lastCheckIn: lastCheckIn,
                               pausedUntil: pausedUntil, inReplyTo: inReplyTo, checkedIn: checkedIn, acknowledgement: acknowledgement,
                               outcome: outcome, bounce: bounce)
        twin.languages = languages
        return twin
    }
}
