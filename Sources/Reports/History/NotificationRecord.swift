import Foundation
import Values

/// One `notification_logs` row as a report lists it: a failed, retrying or stuck mail of a day, or
/// any row of the user in a per-user report. Text from the database is made printable, and
/// addresses are masked unless the report shows full emails.
public struct NotificationRecord: Sendable, Equatable {
    /// `notification_date`: the run date `D` the row belongs to.
    public let date: CalendarDate
    /// `sending`, `sent`, `retry`, `failed`, `skipped`, or nil for a row written before the
    /// delivery-state migration.
    public let status: String?
    /// `email_sent`: the mail server accepted the message.
    public let emailSent: Bool
    /// `users.id`.
    public let userID: String
    /// The user's current name, when the user still exists.
    public let name: String?
    /// The recipient as recorded when the row was claimed (`recipient_masked`; always masked).
    public let recipient: String?
    /// The user's current emergency contact: masked unless full emails were asked for.
    public let contactEmail: String?
    /// `m` at notification time.
    public let missedDays: Int
    /// `L` as the run saw it (nil for old rows).
    public let lastCheckIn: CalendarDate?
    /// Delivery attempts so far.
    public let attempts: Int
    /// The `Message-ID` (without angle brackets).
    public let messageID: String?
    /// When the server accepted the mail.
    public let sentAt: Date?
    /// When a transient failure is tried again.
    public let nextAttemptAt: Date?
    /// When the row was (last) claimed for sending.
    public let claimedAt: Date?
    /// Who claimed it (`host:pid`).
    public let claimedBy: String?
    /// For `sending`: whether the database session that claimed it is still alive (in flight)
    /// rather than gone (stuck until the next run takes it over).
    public let claimAlive: Bool
    /// The server's reply or the error (`last_error`, else `last_reply`).
    public let detail: String?

    /// The status for people: `legacy sent` / `legacy not sent` for old rows, `stuck` for a claim
    /// whose session is gone, else the stored status.
    public var displayStatus: String {
        switch status {
        case nil: emailSent ? "legacy sent" : "legacy not sent"
        case "sending"?: claimAlive ? "sending" : "stuck"
        case let status?: status
        }
    }

    /// The address to show: the recorded (masked) recipient, else the current contact.
    public var shownRecipient: String { recipient ?? contactEmail ?? "" }
}
