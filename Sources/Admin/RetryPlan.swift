import Config
import Delivery
import Foundation
import Logging
import Mail
import Rule
import Store
import Values

/// `sileme-notifier retry`: which failed or stuck mails of a run date would be re-attempted now,
/// and what the rule says about each user today (a user who checked in since, or whose streak
/// was notified in the meantime, is not mailed).
package struct RetryPlan: Sendable {
    /// One row to retry, with the rule's current decision (nil: no longer due).
    package struct Entry: Sendable {
        /// The row.
        package let target: RetryTarget
        /// `send` when it will be re-attempted; another decision or nil when it will not.
        package let decision: Decision?
        /// Why a row the rule does not decide on is not sent again (`contact_bounced`: a mail of
        /// the streak to its contact bounced, docs/bounces.md); nil otherwise.
        package var reason: String? = nil

        /// The language the mail is written in, and why it is not the one asked for (nil: a
        /// webhook event, or templates that do not load — the send would refuse them).
        package var language: LanguageTag.Choice? = nil

        /// What the listing says of it: the reason, else the decision, else `not_due`.
        package var now: String { reason ?? decision?.rawValue ?? "not_due" }
    }

    /// The entries, by user id.
    package let entries: [Entry]

    /// Reads the plan for `kinds` (every kind when nil). An alert is re-attempted when the rule
    /// still says `send` for its user (to the contacts in force now), or — when another contact of
    /// the user got the streak's alert — when it was left unfinished (a transient failure or a
    /// crashed claim, not a refusal) and its address is still a contact of the user, or it is a
    /// webhook event (refused or not) and the channel is on;
    /// an all-clear, a follow-up or an introduction whenever it is still owed.
    package static func make(configuration: NotifierConfiguration, runDate: CalendarDate, userID: String?, logger: Logger,
                            kinds: [DeliveryJob.Kind]? = nil) throws -> RetryPlan {
        let db = try PGConnection(configuration.database)
        try RowSecurity.verify(db)
        try CheckInTriggers.verify(db)
        // The language each mail would be written in, chosen as the send chooses it.
        let templates = try? MailTemplates(directory: configuration.templateDirectory, defaultLanguage: configuration.defaultLanguage)
        return try db.transaction(readOnly: true, oneSnapshot: true) {
            let targets = try NotificationStore(owner: "retry", claimLeaseSeconds: configuration.claimLeaseSeconds)
                .retryTargets(db, runDate: runDate, userID: userID, kinds: kinds)
            // `retry` is the run's plan for these users: their decisions now.
            let decisions = targets.isEmpty ? [:] : try RunPlan.read(
                db, configuration: configuration, runDate: runDate,
                scope: .retry(users: Set(targets.map(\.userID)), kinds: kinds.map(Set.init))).decisions
            return RetryPlan(entries: targets.map { target in
                var entry = Self.entry(target, decision: decisions[target.userID], configuration: configuration)
                if target.channel.audience == .contacts, let templates {
                    entry.language = templates.choose(contact: target.contactLanguage, user: target.userLanguage)
                }
                return entry
            })
        }
    }

    /// What `retry` does with `target` given the rule's `decision` for its user now. Pure.
    static func entry(_ target: RetryTarget, decision: Decision?, configuration: NotifierConfiguration) -> Entry {
        if target.contactBounced {
            return Entry(target: target, decision: nil, reason: "contact_bounced")
        }
        if target.kind != DeliveryJob.Kind.alert.rawValue {
            return Entry(target: target, decision: .send)
        }
        // Finished as an unfinished alert: not a refusal, and still a contact of the user; an
        // app's event while its channel is on, refused or not.
        if decision == .alreadyNotified && target.channel.audience == .app && configuration.channels(for: .alert).contains(target.channel) {
            return Entry(target: target, decision: .send)
        }
        if decision == .alreadyNotified && target.status != "failed" && target.contactInForce {
            return Entry(target: target, decision: .send)
        }
        return Entry(target: target, decision: decision)
    }

    /// The users that will be re-attempted.
    package var usersToSend: Set<String> { Set(entries.filter { $0.decision == .send }.map(\.target.userID)) }
}
