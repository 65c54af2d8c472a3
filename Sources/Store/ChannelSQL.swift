import Rule

/// The channels as SQL sees them: never by name. A statement says which channels it means with a
/// standing parameter, bound from the one list of channels (`DeliveryJob.Channel`) whenever the
/// statement names it (`SQLStatement.parameters`), so no statement spells a channel and a new
/// channel needs no change here:
///
/// - `$contact_channels`: the channels whose messages go to one contact each (mail): an alert on
///   one of them is what a contact's notices, escalation and answers follow;
/// - `$app_channels`: the channels whose messages are events about the user, to the service's
///   own app (the webhook): their rows name no contact (`''`) but for the kinds about one contact;
/// - `$bounce_channels`: the channels whose messages come back as bounce reports (mail).
///
/// Which channels are *on* for a kind is the configuration's (`MessageSettings.channels(for:)`),
/// passed to a statement as `$channels`.
package enum ChannelSQL {
    /// The standing parameters and their values.
    static let standing: [String: String?] = [
        "contact_channels": literal(DeliveryJob.Channel.of(.contacts)),
        "app_channels": literal(DeliveryJob.Channel.of(.app)),
        "bounce_channels": literal(DeliveryJob.Channel.allCases.filter(\.bounces)),
    ]

    /// `channels` as a `text[]` parameter's value.
    package static func literal(_ channels: [DeliveryJob.Channel]) -> String { PGArray.literal(channels.map(\.rawValue)) }
}
