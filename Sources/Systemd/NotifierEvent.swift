/// The events every run reports (`NOTIFIER_EVENT`), each with a stable journald `MESSAGE_ID`
/// documented in `systemd/sileme-notifier.catalog`.
public enum NotifierEvent: String, Sendable, CaseIterable {
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

    /// `MESSAGE_ID` of `run_failed`: a daemon run that could not be carried out at all.
    public static let runFailedMessageID = "3d1f7c0e6a2b4c59a8e1d2f3b4c5d6e7"

    /// The journald `MESSAGE_ID` (128-bit, hex).
    public var messageID: String {
        switch self {
        case .runStarted: "b5114b477a7847da8a32aee24ab6a236"
        case .runFinished: "4fb505200f49472eb5538283f7de1a2b"
        case .notificationSent: "9210aefff7ae4cdcb2a59b85313eba44"
        case .notificationFailed: "ce86ef5e801347caaa6f2e50266c0468"
        case .notificationSkipped: "e07c7725ec0f42bea29914801a2ebf54"
        }
    }
}
