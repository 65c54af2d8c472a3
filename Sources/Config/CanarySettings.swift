import Values

/// The canary (`CANARY_*`, docs/operating.md, "The canary"): a test message sent through each relay
/// every `every` to an address delivered into the bounce mailbox, expected back within `within`.
///
/// A relay's `250` says it took a message, not that it arrives: a relay that accepts and drops, an
/// expired DNS or SPF record, a suspended account all leave every row `sent`. The canary sees them.
package struct CanarySettings: Sendable, Equatable {
    /// `CANARY_EVERY`: how often each relay carries a canary (off when unset or `0`).
    package var every: Duration
    /// `CANARY_ADDRESS`: where the canary is sent — an address the mail system delivers into
    /// `BOUNCE_MAILBOX`, which the daemon reads.
    package var address: EmailAddress
    /// `CANARY_WITHIN`: how long a canary may take to come back before it is lost (default 15 minutes).
    package var within: Duration = .seconds(900)

    /// Creates the settings.
    package init(every: Duration, address: EmailAddress, within: Duration = .seconds(900)) {
        self.every = every
        self.address = address
        self.within = within
    }
}
