import Foundation
import Values

/// One `notification_logs` row as a report lists it: a failed, retrying or stuck mail of a day, or
/// any row of the user in a per-user report. Text from the database is made printable, and
/// addresses are masked unless the report shows full emails.
package struct NotificationRecord: Sendable, Equatable {
    /// `notification_date`: the run date `D` the row belongs to.
    package let date: CalendarDate
    /// `sending`, `sent`, `retry`, `failed`, `skipped`, or nil for a row written before the
    /// delivery-state migration.
    package let status: String?
    /// `email_sent`: the mail server accepted the message.
    package let emailSent: Bool
    /// `users.id`.
    package let userID: String
    /// The user's current name, when the user still exists.
    package let name: String?
    /// The recipient as recorded when the row was claimed (`recipient_masked`; always masked).
    package let recipient: String?
    /// The user's current emergency contact: masked unless full emails were asked for.
    package let contactEmail: String?
    /// `m` at notification time.
    package let missedDays: Int
    /// `L` as the run saw it (nil for old rows).
    package let lastCheckIn: CalendarDate?
    /// Delivery attempts so far.
    package let attempts: Int
    /// The `Message-ID` (without angle brackets).
    package let messageID: String?
    /// When the server accepted the mail.
    package let sentAt: Date?
    /// When a transient failure is tried again.
    package let nextAttemptAt: Date?
    /// When the row was (last) claimed for sending.
    package let claimedAt: Date?
    /// Who claimed it (`host:pid`).
    package let claimedBy: String?
    /// For `sending`: whether the database session that claimed it is still alive (in flight)
    /// rather than gone (stuck until the next run takes it over).
    package let claimAlive: Bool
    /// The server's reply or the error (`last_error`, else `last_reply`).
    package let detail: String?

    /// The status for people: `legacy sent` / `legacy not sent` for old rows, `stuck` for a claim
    /// whose session is gone, else the stored status.
    package var displayStatus: String {
        switch status {
        case nil: emailSent ? "legacy sent" : "legacy not sent"
        case "sending"?: claimAlive ? "sending" : "stuck"
        case let status?: status
        }
    }

    /// The address to show: the recorded (masked) recipient, else the current contact.
    package var shownRecipient: String { recipient ?? contactEmail ?? "" }
}
