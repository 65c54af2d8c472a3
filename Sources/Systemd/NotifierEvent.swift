import Logging

/// Every event the notifier reports (`NOTIFIER_EVENT`): the run's, each with a stable journald
/// `MESSAGE_ID` documented in `systemd/sileme-notifier.catalog`, and the daemon's own. Code never
/// spells an event name as a string: it logs `event.metadata`.
package enum NotifierEvent: String, Sendable, CaseIterable {
    /// A run began (`RUN_DATE`, `RUN_MODE`).
    case runStarted = "run_started"
    /// A run ended, with its counts.
    case runFinished = "run_finished"
    /// The server accepted a mail (`USER_ID`, `MISS_DAYS`, masked `RECIPIENT`, `SMTP_MESSAGE_ID`).
    case notificationSent = "notification_sent"
    /// A mail failed (transient after retries, or permanent), with the server's reply.
    case notificationFailed = "notification_failed"
    /// A due user was skipped for bad data, with the reason.
    case notificationSkipped = "notification_skipped"
    /// A due user's claim found them no longer due (a check-in dated `D` or `D + 1`, a pause or a
    /// newer account committed during the run): no mail (`CANCEL_REASON`).
    case notificationCancelled = "notification_cancelled"
    /// Once per run: how many users have check-ins dated after `D + 1`, which the rule ignores
    /// (`FUTURE_IGNORED`).
    case futureCheckInsIgnored = "future_check_ins_ignored"
    /// Users whose `time_zone` the zone database does not know (`TIME_ZONE_NAME`, `USERS`): they
    /// are served in `NOTIFY_TIME_ZONE`, never skipped. Once per run of an instant.
    case unknownTimeZone = "unknown_time_zone"
    /// Users whose `notify_time` is not a time of day (`24:00:00`, which PostgreSQL accepts;
    /// `NOTIFY_TIME`, `USERS`): they are served at `NOTIFY_TIME`. Once per run of an instant.
    case unknownNotifyTime = "unknown_notify_time"
    /// Alerts held: their missed days include an intake gap, a day on which the app could record
    /// far fewer check-ins than usual (`HELD`, `GAP_DAYS`, `RELEASE_AT`). Priority `crit`: the
    /// operator decides whether the app was down (docs/intake-hold.md).
    case alertsHeld = "alerts_held"
    /// A contact pressed "I'm on it" on the acknowledgement page (`USER_ID`, `ALERT_DATE`, masked
    /// `RECIPIENT`): the other contacts get an `acknowledged` notice (docs/acknowledgement.md).
    case acknowledgementRecorded = "acknowledgement_recorded"
    /// A report in the bounce mailbox was read and settled (`BOUNCE_VERDICT`, `BOUNCE_ACTION`,
    /// `BOUNCE_REASON` when kept aside, `LOG_ID`, `USER_ID`, masked `RECIPIENT`, `BOUNCE_STATUS`,
    /// `MAILBOX_MESSAGE`) (docs/bounces.md).
    case bounceReceived = "bounce_received"
    /// A report said a contact's mailbox is dead: the delivery row is `bounced` and the contact
    /// `undeliverable` (`LOG_ID`, `USER_ID`, masked `RECIPIENT`, `NOTIFICATION_KIND`,
    /// `BOUNCE_STATUS`, `DIAGNOSTIC`) (docs/bounces.md).
    case contactUndeliverable = "contact_undeliverable"
    /// The bounce mailbox could not be read; the next poll tries again, and the alerting goes on.
    case bounceMailboxUnavailable = "bounce_mailbox_unavailable"
    /// Nobody heard an alert `ESCALATE_AFTER` after it went out: the streak escalated (`USER_ID`,
    /// `ALERT_DATE`, `ESCALATION_CAUSE`, `NOTICES`, `FIRST_ALERTS`) (docs/escalation.md).
    case escalated
    /// Nobody heard it after the escalation either (`USER_ID`, `ALERT_DATE`). Priority `crit`:
    /// someone has to act by other means.
    case unheard
    /// A contact who said "I'm on it" said how it ended on the acknowledgement page (`USER_ID`,
    /// `ALERT_DATE`, masked `RECIPIENT`, `OUTCOME`: `ok` or `unreachable`): the other contacts are
    /// told, and the streak is closed or its next step comes at once (docs/escalation.md).
    case outcomeRecorded = "outcome_recorded"
    /// A relay could not take a message for reasons of its own (unreachable, TLS, AUTH, `421`, a
    /// refused session or `MAIL FROM`): the message went to the next relay of `SMTP_FALLBACK`
    /// (`RELAY`, `NEXT_RELAY` — empty when none was left — `REASON`); the relay rests for
    /// `SMTP_FALLBACK_RETRY` (docs/delivery.md, "Fallback relays").
    case relayFailover = "relay_failover"
    /// A canary sent through a relay did not come back into the bounce mailbox within
    /// `CANARY_WITHIN`, bounced, or could not be sent (`RELAY`, `CANARY_ID`, `REASON`).
    case canaryLost = "canary_lost"
    /// A daemon run that could not be carried out at all.
    case runFailed = "run_failed"
    /// The daemon is up (after its start-up checks).
    case daemonStarted = "daemon_started"
    /// The daemon is stopping.
    case daemonStopped = "daemon_stopped"
    /// The daemon could not read the schedule's state from the database; it retries with backoff.
    case databaseUnavailable = "database_unavailable"
    /// A run lost its database connection and is reconnecting.
    case databaseReconnecting = "database_reconnecting"
    /// SIGHUP: the new configuration is in force.
    case configurationReloaded = "configuration_reloaded"
    /// SIGHUP: the new configuration was refused; the previous one stays in force.
    case configurationRejected = "configuration_rejected"

    /// The journald `MESSAGE_ID` (128-bit, hex) of the events the catalog documents.
    package var messageID: String? {
        switch self {
        case .runStarted: "b5114b477a7847da8a32aee24ab6a236"
        case .runFinished: "4fb505200f49472eb5538283f7de1a2b"
        case .notificationSent: "9210aefff7ae4cdcb2a59b85313eba44"
        case .notificationFailed: "ce86ef5e801347caaa6f2e50266c0468"
        case .notificationSkipped: "e07c7725ec0f42bea29914801a2ebf54"
        case .runFailed: "3d1f7c0e6a2b4c59a8e1d2f3b4c5d6e7"
        case .alertsHeld: "ba186e0e0bf34c279a00ad43509e5af0"
        case .acknowledgementRecorded: "6c0a3e5f2b7d4e18a9c1f0d2e3b4a5c6"
        case .contactUndeliverable: "a6463324a233427b991a95d572da1d85"
        case .relayFailover: "f8de42a154c84d4cb3843c94a08de370"
        case .canaryLost: "2fa0dc6eef704a3d832e8c9e93d38780"
        case .bounceReceived, .bounceMailboxUnavailable, .escalated, .unheard, .outcomeRecorded,
             .notificationCancelled, .futureCheckInsIgnored, .unknownTimeZone, .unknownNotifyTime,
             .daemonStarted, .daemonStopped, .databaseUnavailable, .databaseReconnecting,
             .configurationReloaded, .configurationRejected: nil
        }
    }

    /// The fields that name the event in the journal: `NOTIFIER_EVENT`, and `MESSAGE_ID` where the
    /// event has one. Merge the event's own fields into it.
    package var metadata: Logger.Metadata {
        var fields: Logger.Metadata = ["notifier_event": "\(rawValue)"]
        if let messageID { fields["message_id"] = "\(messageID)" }
        return fields
    }
}
