import Foundation
import Values

extension DeliveryJob {
    /// How a message travels (`notification_logs.channel`), and everything the rest of the code
    /// needs to know of a channel without naming it: whom its messages go to, which kinds it can
    /// carry, and how its rows name their recipient. This is the one list of channels: a query
    /// gets the channels as parameters (`Store`'s `ChannelSQL`), a report asks `label`, the
    /// lifecycle asks `audience` — so a new channel is a case here, its `DeliveryChannel` (the
    /// sender, in `Delivery/Channels/`), and its line in `DeliveryChannels.standard`. Each channel
    /// has its own delivery rows, so a failure on one never resends on another.
    package enum Channel: String, Sendable, CaseIterable {
        /// A mail to one contact (SMTP or the outbox).
        case email
        /// A signed POST to `WEBHOOK_URL`, one per event about the user.
        case webhook

        /// Whom a channel's messages go to.
        package enum Audience: Sendable, Equatable {
            /// One message per contact, to the contact's address: the delivery key names the
            /// contact, the contact answers (the page, a bounce, an escalation) on it.
            case contacts
            /// One message per event about the user, to the service's own app, which tells whom
            /// it wants: the delivery key names no contact (`''`), except for the kinds about one
            /// contact (`Kind.keyedByContact`); the event lists the user's contacts.
            case app
        }

        /// Whom its messages go to.
        package var audience: Audience {
            switch self {
            case .email: .contacts
            case .webhook: .app
            }
        }

        /// Whether it can carry messages of `kind` at all (the configuration may send fewer):
        /// a contact's channel carries every kind but those for the app alone (`Kind.forAppOnly`).
        package func carries(_ kind: Kind) -> Bool { audience == .app || !kind.forAppOnly }

        /// Whether its messages can come back as bounce reports from the contact's side (so a
        /// dead address stops the streak's notices on it: `LifecycleStore.bounced`).
        package var bounces: Bool {
            switch self {
            case .email: true
            case .webhook: false
            }
        }

        /// Who a row of it names as its recipient (`recipient_masked`): the masked address on a
        /// contact's channel, the channel's name on the app's.
        package func recipientMasked(_ address: EmailAddress) -> String {
            audience == .contacts ? address.masked : rawValue
        }

        /// The channel most messages go on: reports write its kinds bare.
        package static let primary = Channel.email

        /// How reports name it beside a kind, in full and in narrow columns; nil for the primary
        /// channel, whose kinds they write bare.
        package var shown: (name: String, short: String)? {
            switch self {
            case .email: nil
            case .webhook: (rawValue, "wh")
            }
        }

        /// How reports write a kind sent on it: the kind alone on the primary channel, else with
        /// the channel (`all_clear (webhook)`).
        package func label(_ kind: String) -> String { shown.map { "\(kind) (\($0.name))" } ?? kind }

        /// `label` for narrow columns (`alert/wh`).
        package func shortLabel(_ kind: String) -> String { shown.map { "\(kind)/\($0.short)" } ?? kind }

        /// The channels of `audience`.
        package static func of(_ audience: Audience) -> [Channel] { allCases.filter { $0.audience == audience } }
    }
}
