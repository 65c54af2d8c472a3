import Acknowledgement
import Config
import Foundation
import Rule
import Values

/// Turns a delivery job into the exact message bytes: renders the templates and builds the
/// RFC 5322/MIME message with the claim's `Message-ID`.
package struct MailComposer: Sendable {
    /// The templates.
    package let templates: MailTemplates
    /// `FROM_EMAIL`, validated.
    package let from: EmailAddress
    /// `FROM_NAME`, cleaned like a user's name (`DisplayName`: no control, bidi or zero-width
    /// characters, one line); empty when nothing is left. The configuration refuses only line
    /// breaks, and whatever else it holds would reach every contact's `From:` line (Python's
    /// parser, for one, rejects a display name that decodes to CR LF).
    package let fromName: String
    /// `APP_NAME`.
    package let appName: String
    /// The zone of the `Date` header (the service zone).
    package let timeZone: TimeZone
    /// `MISS_THRESHOLD_DAYS` (an introduction says it).
    package let thresholdDays: Int
    /// The acknowledgement links of alerts and follow-ups (`ACK_BASE_URL`); nil makes none.
    package let ackLinks: AckLinks?

    /// The composer a sending run uses: checks what sending needs beyond loading
    /// (`ConfigurationLoader.validateForSending`), reads the templates once and the sender.
    package init(sending mail: MailSettings) throws {
        try mail.validateForSending()
        try self.init(mail, templates: MailTemplates(directory: mail.templateDirectory, defaultLanguage: mail.defaultLanguage))
    }

    /// Creates a composer from the configuration (which must have passed `validateForSending`).
    package init(_ mail: MailSettings, templates: MailTemplates) throws(ConfigurationError) {
        do { from = try EmailAddress(validating: mail.fromEmail ?? "") } catch {
            throw ConfigurationError(setting: "FROM_EMAIL", reason: "not a valid address: \(error.reason)")
        }
        self.templates = templates
        fromName = (try? DisplayName(cleaning: mail.fromName).value) ?? ""
        appName = mail.appName
        timeZone = mail.timeZone
        thresholdDays = mail.thresholdDays
        ackLinks = AckLinks(mail.ack)
    }

    /// A new unique `Message-ID` (without angle brackets) for `job` on `runDate`.
    package func newMessageID(for job: DeliveryJob, runDate: CalendarDate) -> String {
        MailMessage.makeMessageID(userID: job.userID, runDate: job.date(runDate: runDate).description, domain: from.domain)
    }

    /// The template values of `job` on `runDate`.
    package func variables(for job: DeliveryJob, runDate: CalendarDate) -> TemplateVariables {
        var variables = TemplateVariables(userName: job.name.value, missDays: job.missedDays, lastCheckInDate: job.lastCheckIn,
                                          runDate: runDate, appName: appName, pausedUntil: job.pausedUntil)
        switch job.kind {
        case .reminder, .unheard, .undeliverable: break  // never mailed (webhook only)
        case .alert:
            variables.ackURL = ackLink(for: job, runDate: runDate)
        case .allClear, .followUp:
            variables.alertDate = job.notificationDate
            if let checkedIn = job.checkedIn {
                variables.checkedInAt = Self.minuteFormat(checkedIn.at, in: timeZone)
                variables.checkInDate = checkedIn.date
            }
            if job.kind == .followUp { variables.ackURL = ackLink(for: job, runDate: runDate) }
        case .acknowledged:
            variables.alertDate = job.notificationDate
            if let acknowledgement = job.acknowledgement {
                variables.acknowledgedBy = EmailMasking.mask(acknowledgement.contact)
                variables.acknowledgedAt = Self.minuteFormat(acknowledgement.at, in: timeZone)
            }
        case .escalation:
            // Whoever is told nobody has answered can still say "I'm on it".
            variables.alertDate = job.notificationDate
            variables.ackURL = ackLink(for: job, runDate: runDate)
        case .outcomeOK, .outcomeUnreachable:
            variables.alertDate = job.notificationDate
            if let outcome = job.outcome {
                variables.outcomeBy = EmailMasking.mask(outcome.contact)
                variables.outcomeAt = Self.minuteFormat(outcome.at, in: timeZone)
            }
            if job.kind == .outcomeUnreachable { variables.ackURL = ackLink(for: job, runDate: runDate) }
        case .introduction:
            variables.contactEmail = job.email.address
            variables.thresholdDays = thresholdDays
        }
        return variables
    }

    /// The acknowledgement link of an alert, a follow-up, an escalation or an "I couldn't reach
    /// them" notice to its contact (nil without `ACK_BASE_URL`): the streak is the alert's date —
    /// the row's date of each.
    package func ackLink(for job: DeliveryJob, runDate: CalendarDate) -> String? {
        ackLinks?.link(userID: job.userID, alertDate: job.date(runDate: runDate), contact: job.email.address,
                       runDate: runDate, missedDays: job.missedDays)
    }

    /// The language `job`'s recipient is written to in, and why it is not the one asked for, if so.
    package func language(of job: DeliveryJob) -> LanguageTag.Choice {
        templates.choose(contact: job.languages.contact, user: job.languages.user)
    }

    /// The message for `job`, dated `date`: its kind's templates in the recipient's language,
    /// threaded under the alert it answers.
    package func message(for job: DeliveryJob, runDate: CalendarDate, messageID: String, date: Date = Date()) -> MailMessage {
        let rendered = templates.render(variables(for: job, runDate: runDate), kind: job.kind, language: language(of: job).tag)
        return MailMessage(from: from, fromName: fromName.isEmpty ? nil : fromName, to: job.email,
                           subject: rendered.subject, textBody: rendered.text, htmlBody: rendered.html,
                           date: date, timeZone: timeZone, messageID: messageID, inReplyTo: job.inReplyTo)
    }

    /// `YYYY-MM-DD HH:mm` of `date` in `zone`.
    package static func minuteFormat(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }
}
