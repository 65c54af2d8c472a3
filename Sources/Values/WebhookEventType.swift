/// The type of a webhook event, as the `type` field of its JSON body names it.
///
/// A value type of its own (not nested in the webhook's event) because the configuration reads
/// `WEBHOOK_EVENTS` into a set of these before any webhook code runs.
package enum WebhookEventType: String, Sendable, Hashable, CaseIterable, Codable {
    /// The user missed the threshold: the contacts are told (the alert mail's twin).
    case alert = "checkin.alert"
    /// The user checked in after an alert of the streak was accepted.
    case allClear = "checkin.all_clear"
    /// The streak is still open some days after its alert.
    case followUp = "checkin.follow_up"
    /// The first missed day: for the app to remind the user to check in (webhook only).
    case reminder = "checkin.reminder"
    /// A contact pressed "I'm on it" on the acknowledgement page (docs/acknowledgement.md): the app can tell the user.
    case acknowledged = "checkin.acknowledged"
    /// Nobody heard the alert `ESCALATE_AFTER` after it went out (docs/escalation.md): the
    /// contacts, each with its tier and whether it bounced, for the app's SMS or voice gateway.
    case escalated = "checkin.escalated"
    /// The contact who went said how it ended ("They're OK" or "I couldn't reach them").
    case outcome = "checkin.outcome"
    /// For the operator: nobody heard the alert after the escalation either.
    case unheard = "notifier.unheard"
    /// A contact address seen for the first time.
    case introduction = "contact.introduction"
    /// A mail to a contact bounced for good (docs/bounces.md): the app can ask the user for
    /// another address. One per bounced mail's streak and contact.
    case undeliverable = "contact.undeliverable"
    /// For the operator, not about one user: a run held alerts over an intake gap (the app could
    /// not record check-ins, docs/intake-hold.md).
    case alertsHeld = "notifier.alerts_held"
    /// For the operator, not about one user: a canary through a relay did not come back into the
    /// bounce mailbox (docs/operating.md, "The canary"): mail through that relay may not arrive.
    case canaryLost = "notifier.canary_lost"
    /// A signed test event (`check`): never filtered, never about a user.
    case ping

    /// The types a run may send, which `WEBHOOK_EVENTS` chooses from (every type but `ping`).
    package static let selectable: [WebhookEventType] = allCases.filter { $0 != .ping }
}
