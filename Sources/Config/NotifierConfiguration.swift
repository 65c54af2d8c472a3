import Foundation
import Rule
import Values

/// The daemon's whole configuration as typed values, read once at the edge
/// (`ConfigurationLoader`) and passed inward.
package struct NotifierConfiguration: Sendable {
    /// `DATABASE_URL`: a libpq connection string or URI; empty means libpq's `PG*` defaults.
    package var databaseURL: Secret = Secret("")
    /// `DATABASE_READ_URL`: a hot standby the dry run and `report` read from; nil reads the primary.
    package var databaseReadURL: Secret?
    /// `DATABASE_SCHEMA`: where the notifier's own tables and functions live (default `sileme`).
    package var databaseSchema = DatabaseSchema.standard
    /// `MAIL_TRANSPORT`: SMTP (default) or the file outbox.
    package var mailTransport: MailTransportKind = .smtp
    /// SMTP server settings (used when `mailTransport` is `.smtp`).
    package var smtp = SMTPSettings()
    /// `SMTP_FALLBACK`: further relays, in order, tried when the current one cannot take a message
    /// for reasons of the relay (docs/delivery.md, "Fallback relays"); each has the primary's
    /// timeouts, retries, workers, rate and EHLO name, and its own URL, TLS and credentials.
    package var smtpFallbacks: [SMTPSettings] = []
    /// `SMTP_FALLBACK_RETRY`: how long a relay that failed as a relay is passed over before it is
    /// tried first again (default 5 minutes).
    package var smtpFallbackRetry: Duration = .seconds(300)
    /// `OUTBOX_DIR`: the Maildir-style folder messages are written to when `mailTransport` is
    /// `.outbox` (required then; it must exist, its `tmp/`, `new/` and `cur/` are created).
    package var outboxDirectory: String?
    /// `FROM_EMAIL`: the sender address (required to send mail).
    package var fromEmail: String?
    /// `FROM_NAME`: the sender's display name.
    package var fromName: String = "一键打卡团队"
    /// `APP_NAME`: the app's name as templates show it.
    package var appName: String = "一键打卡"
    /// `NOTIFY_TIME`: the daily fire time in the service zone (default 09:00).
    package var notifyTime = TimeOfDay(hour: 9, minute: 0)
    /// `NOTIFY_TIME_ZONE`: the service zone that defines days (default Asia/Shanghai).
    package var timeZone: TimeZone = TimeZone(identifier: "Asia/Shanghai")!
    /// `NOTIFY_TIME` in `NOTIFY_TIME_ZONE`: the schedule of every user who set neither their own
    /// zone nor their own time (docs/user-time.md).
    package var schedule: DailySchedule { DailySchedule(time: notifyTime, timeZone: timeZone) }
    /// `MISS_THRESHOLD_DAYS`, `CATCH_UP_DAYS` and `SUPERSEDE` (default on).
    package var rule = MissRule(thresholdDays: 2, catchUpDays: 7)
    /// `INTAKE_DROP_RATIO`, `INTAKE_MIN_USERS`, `HOLD_HOURS`: the alerts held over a day on which
    /// the app could record far fewer check-ins than usual (docs/intake-hold.md).
    package var intakeGuard = IntakeGuard()
    /// `TEMPLATE_DIR`: folder with the mail templates; nil uses the built-in default text.
    package var templateDirectory: String?
    /// `DEFAULT_LANGUAGE`: the language of a contact whose row and user's row name none (or none
    /// with templates). Nil (not set): `zh-Hans`, or the language `TEMPLATE_DIR` is named by when
    /// templates lie at its top (`MailTemplates`).
    package var defaultLanguage: LanguageTag?
    /// `RETRY_LATER_SECONDS`: after a run's own attempts, the first later retry of a transiently
    /// failed mail (default 300; doubled per round, at most 2 hours apart, until the day ends).
    package var retryLaterSeconds: Double = 300
    /// `DATABASE_RECONNECT_SECONDS`: how long a run keeps reconnecting after its database
    /// connection broke (a PostgreSQL restart) before it gives up; 0 gives up at once.
    package var databaseReconnectSeconds: Double = 60
    /// `CLAIM_LEASE_SECONDS`: how long a claim or the run lock made through a connection pooler
    /// stays held without renewal (the run renews it every quarter of that while it works); after
    /// a crash there, the next run takes over once it has run out (default 120). On a direct
    /// connection a crashed run's claims are taken over at once, whatever the lease.
    package var claimLeaseSeconds: Double = 120
    /// `HEARTBEAT_URL`: a dead man's switch pinged after each daemon run (`/fail` appended on failure).
    package var heartbeatURL: String?
    /// `MIGRATIONS_DIR`: folder with the versioned SQL migrations; nil searches the usual places.
    package var migrationsDirectory: String?
    /// `METRICS_FILE`: where the daemon and every run write their metrics for node_exporter's
    /// textfile collector (atomically); nil writes none.
    package var metricsFile: String?
    /// `RETENTION_DAYS`: the daemon deletes `notification_logs` and `notifier_runs` rows older than
    /// this many days after its daily run; 0 keeps everything.
    package var retentionDays: Int = 0
    /// The webhook channel (`WEBHOOK_*`); nil when `WEBHOOK_URL` is unset, the channel off.
    package var webhook: WebhookSettings?
    /// `USER_REMINDER`: on the first missed day the run sends `checkin.reminder` over the webhook
    /// for the app to remind the user (default off; on needs the webhook and that event type).
    package var userReminder: Bool = false

    /// `FOLLOW_UP_DAYS`: with N > 0, a streak still open N days after its alert gets one
    /// follow-up to each contact that got the alert, threaded under it; 0 (default) sends none.
    package var followUpDays: Int = 0
    /// `ESCALATE_AFTER`: an alert nobody has heard this long after it first went out escalates,
    /// and one still unheard as long again is declared unheard (docs/escalation.md); nil turns
    /// escalation off. Default 3 hours: long enough for a contact at work to see the mail, short
    /// enough that someone else is asked the same day.
    package var escalateAfter: Duration? = .seconds(3 * 3600)
    /// `INTRODUCE_CONTACTS`: a contact named for the first time gets one introduction (default on).
    package var introduceContacts: Bool = true
    /// `ALL_CLEAR_POLL_SECONDS`: how often the daemon looks for check-ins that end an alerted
    /// streak when it cannot listen for them (through a pooler), and how often it sweeps anyway
    /// while it listens (default 30).
    package var allClearPollSeconds: Double = 30
    /// The acknowledgement page (`ACK_*`, docs/acknowledgement.md); nil when neither
    /// `ACK_BASE_URL` nor `ACK_LISTEN` is set: no link in any mail, no listener.
    package var ack: AckSettings?
    /// The bounces (`BOUNCE_*`, docs/bounces.md); nil when `BOUNCE_ADDRESS` is unset:
    /// every message is sent from `FROM_EMAIL` and no mailbox is read.
    package var bounce: BounceSettings?
    /// The canary (`CANARY_*`, docs/operating.md); nil when `CANARY_EVERY` is unset or `0`: no
    /// test message is sent.
    package var canary: CanarySettings?
    /// `DATABASE_LISTEN_URL`: a direct (unpooled) connection for `LISTEN`, where `DATABASE_URL`
    /// goes through a transaction pooler; nil listens on `DATABASE_URL` when that is direct.
    package var databaseListenURL: Secret?

    /// Where the read-only reports (the dry run, `--preview`, `report`) read: `DATABASE_READ_URL`,
    /// else `DATABASE_URL`.
    package var readDatabaseURL: Secret { databaseReadURL ?? databaseURL }

    /// `OUTBOX_DIR`, which `MAIL_TRANSPORT=outbox` requires (`MailSettings.requireOutboxDirectory`).
    package func requireOutboxDirectory() throws(ConfigurationError) -> String { try mail.requireOutboxDirectory() }

    /// Creates a configuration with every documented default.
    package init() {}
}
