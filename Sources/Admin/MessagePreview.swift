import Config
import Foundation
import Mail
import Rule
import Store
import Values

/// `--preview USER_ID`: the exact message (RFC 5322 bytes) the user's contact would receive on a
/// run date, with what the rule decides for that user. Reads only.
public struct MessagePreview: Sendable {
    /// What the rule says about the user on the run date, in words.
    public let verdict: String
    /// The message, when the user's name and address are usable.
    public let message: [UInt8]?

    /// Builds the preview for `userID` on `runDate`; throws `PreviewError` for an unknown user.
    public static func make(configuration: NotifierConfiguration, userID: String, runDate: CalendarDate) throws -> MessagePreview {
        let db = try PGConnection(configuration.readDatabaseURL)
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
        guard let email = try? EmailAddress(validating: found.email ?? ""),
              let name = try? DisplayName(cleaning: found.name ?? "") else {
            return MessagePreview(verdict: verdict, message: nil)
        }
        var sending = configuration
        if sending.fromEmail == nil { sending.fromEmail = "preview@invalid.example" }
        let composer = try MailComposer(configuration: sending, templates: MailTemplates(directory: configuration.templateDirectory))
        // The mail the rule would send (after a pause: the pause's text), whatever it decides today.
        let job = evaluation.flatMap { rule.job(for: candidate, $0) }
            ?? DeliveryJob(userID: candidate.userID, name: name, email: email, missedDays: m, lastCheckIn: candidate.lastCheckIn,
                           pausedUntil: since > candidate.lastCheckIn ? since : nil)
        let message = composer.message(for: job, runDate: runDate, messageID: composer.newMessageID(for: job, runDate: runDate))
        return MessagePreview(verdict: verdict, message: message.rendered())
    }
}

/// An invalid `--preview` argument (exit 64).
public struct PreviewError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let message: String
    public var description: String { message }
}
