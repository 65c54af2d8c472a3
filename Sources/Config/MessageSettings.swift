import Rule

/// The slice of the configuration that says which messages a run owes and on which channels: the
/// rule, the lifecycle's optional messages (`INTRODUCE_CONTACTS`, `FOLLOW_UP_DAYS`,
/// `USER_REMINDER`) and the kinds the webhook sends (`WEBHOOK_EVENTS`). The Store's selection of
/// what is due takes this and nothing else of the settings.
package struct MessageSettings: Sendable {
    package var rule: MissRule
    package var introduceContacts: Bool
    package var followUpDays: Int
    package var userReminder: Bool
    /// The kinds that also go out as webhook events (empty without `WEBHOOK_URL`).
    package var webhookKinds: Set<DeliveryJob.Kind>

    package init(rule: MissRule, introduceContacts: Bool = true, followUpDays: Int = 0, userReminder: Bool = false,
                 webhookKinds: Set<DeliveryJob.Kind> = []) {
        self.rule = rule
        self.introduceContacts = introduceContacts
        self.followUpDays = followUpDays
        self.userReminder = userReminder
        self.webhookKinds = webhookKinds
    }

    /// Whether messages of `kind` also go out as webhook events.
    package func webhookSends(_ kind: DeliveryJob.Kind) -> Bool { webhookKinds.contains(kind) }

    /// The channels messages of `kind` travel on: each channel that carries the kind
    /// (`DeliveryJob.Channel.carries`) — a contact's always, the app's when `WEBHOOK_URL` is set
    /// and `WEBHOOK_EVENTS` names the kind's event.
    package func channels(for kind: DeliveryJob.Kind) -> [DeliveryJob.Channel] {
        DeliveryJob.Channel.allCases.filter { $0.carries(kind) && ($0.audience == .contacts || webhookSends(kind)) }
    }
}

extension NotifierConfiguration {
    /// The messages' slice, for the Store's selection of what is due.
    package var messages: MessageSettings {
        MessageSettings(rule: rule, introduceContacts: introduceContacts, followUpDays: followUpDays, userReminder: userReminder,
                        webhookKinds: Set(DeliveryJob.Kind.allCases.filter { webhook?.sends($0.webhookEventType) ?? false }))
    }

    /// Whether messages of `kind` also go out as webhook events: `WEBHOOK_URL` is set and
    /// `WEBHOOK_EVENTS` lists the kind's event type.
    package func webhookSends(_ kind: DeliveryJob.Kind) -> Bool { webhook?.sends(kind.webhookEventType) ?? false }

    /// The channels messages of `kind` travel on (`MessageSettings.channels(for:)`).
    package func channels(for kind: DeliveryJob.Kind) -> [DeliveryJob.Channel] { messages.channels(for: kind) }
}
