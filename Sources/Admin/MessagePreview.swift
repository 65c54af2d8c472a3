import Config
import Foundation
import Mail
import Rule
import Store
import Values

/// `--preview USER_ID [--kind KIND] [--contact N]`: the exact message (RFC 5322 bytes) of a kind
/// (the alert by default) that the user's `N`th contact in force (the first by default) would
/// receive on a run date, with what the rule decides for that user and the contacts it would mail.
/// Reads only. A kind that answers an alert (an all-clear, a follow-up, a notice) is threaded under
/// a placeholder alert id; an outcome notice names the user's first other contact as the one who
/// went (or the contact itself, when it is the only one).
package struct MessagePreview: Sendable {
    /// What the rule says about the user on the run date, in words.
    package let verdict: String
    /// The message, when the user's name and address are usable.
    package let message: [UInt8]?

    /// Builds the preview for `userID` on `runDate`; throws `PreviewError` for an unknown user.
    package static func make(configuration: NotifierConfiguration, userID: String, runDate: CalendarDate,
                            kind: DeliveryJob.Kind = .alert, contact: Int = 1) throws -> MessagePreview {
        let db = try PGConnection(configuration.database, \.readURL)
        let rule = configuration.rule
        let found = try db.transaction(readOnly: true) {
            try NotificationStore(owner: "preview", claimLeaseSeconds: configuration.claimLeaseSeconds).user(db, id: userID, runDate: runDate, rule: rule)
        }
        guard let found else { throw PreviewError(message: "no user with id \(userID)") }
        guard let candidate = found.candidate else {
            return MessagePreview(verdict: "never checked in before \(runDate): no mail (the first check-in is the consent)", message: nil)
        }
        let since = rule.effectiveLastCheckIn(candidate)
        let m = rule.missedDays(lastCheckIn: since, runDate: runDate)
        let future = candidate.ignoredFutureCheckIn.map { "; ignored future-dated check-in \($0)" } ?? ""
        let pause = since > candidate.lastCheckIn && !rule.isPaused(candidate, runDate: runDate)
            ? ", counted from the end of a pause on \(since)" : ""
        let verdict: String
        var evaluation: Evaluation?
        if found.checkedInSince {
            verdict = "checked in on \(runDate) or the day after: no mail\(future)"
        } else if let evaluated = rule.evaluate(candidate, runDate: runDate) {
            evaluation = evaluated
            verdict = "\(evaluated.decision.rawValue) (m = \(evaluated.missedDays), last check-in \(candidate.lastCheckIn)\(pause))"
                + (evaluated.reason.map { ": \($0)" } ?? "") + future
        } else if rule.isPaused(candidate, runDate: runDate) {
            verdict = "not due (paused until \(candidate.pausedUntil!), last check-in \(candidate.lastCheckIn))\(future)"
        } else {
            verdict = "not due (m = \(m) < \(rule.thresholdDays), last check-in \(candidate.lastCheckIn)\(pause))\(future)"
        }
        let inForce = candidate.contactsInForce
        let listed = inForce.enumerated().map { index, raw in
            let address = try? EmailAddress(validating: raw.email ?? "")
            return "\(index + 1). \(address?.masked ?? "invalid") (position \(raw.position))"
        }
        let contacts = "; contacts: " + listed.joined(separator: ", ")
        guard contact >= 1, contact <= inForce.count else {
            throw PreviewError(message: "--contact \(contact): the user has \(inForce.count) contact(s) in force")
        }
        guard let email = try? EmailAddress(validating: inForce[contact - 1].email ?? ""),
              let name = try? DisplayName(cleaning: found.name ?? "") else {
            return MessagePreview(verdict: verdict + contacts, message: nil)
        }
        var sending = configuration
        if sending.fromEmail == nil { sending.fromEmail = "preview@invalid.example" }
        let composer = try MailComposer(sending.mail, templates: MailTemplates(directory: configuration.templateDirectory, defaultLanguage: configuration.defaultLanguage))
        // The mail the rule would send (after a pause: the pause's text), whatever it decides today.
        let missed = evaluation?.missedDays ?? m
        let alertDate = runDate.adding(days: -max(0, missed - rule.thresholdDays))
        let threaded = DeliveryJob.Kind.threaded.contains(kind)
        let reporter = inForce.enumerated().first { $0.offset != contact - 1 }?.element.email ?? email.address
        let job = DeliveryJob(kind: kind, userID: candidate.userID, name: name, email: email,
                              position: inForce[contact - 1].position,
                              notificationDate: threaded ? alertDate : nil,
                              missedDays: missed, lastCheckIn: candidate.lastCheckIn,
                              pausedUntil: since > candidate.lastCheckIn ? since : nil,
                              inReplyTo: threaded
                                  ? MailMessage.makeMessageID(userID: candidate.userID, runDate: alertDate.description, domain: composer.from.domain)
                                  : nil,
                              checkedIn: kind == .allClear ? (Date(), runDate) : nil,
                              acknowledgement: kind == .acknowledged ? (reporter.lowercased(), Date()) : nil,
                              outcome: kind == .outcomeOK || kind == .outcomeUnreachable ? (reporter.lowercased(), Date()) : nil)
        let message = composer.message(for: job, runDate: runDate, messageID: composer.newMessageID(for: job, runDate: runDate))
        return MessagePreview(verdict: verdict + contacts, message: message.rendered())
    }
}

/// An invalid `--preview` argument (exit 64).
package struct PreviewError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    package let message: String
    package var description: String { message }
}
