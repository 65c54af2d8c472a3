import Foundation
import Logging

/// Sends the due mails of one run with the claim → send → record protocol of SPEC §4, over
/// `SMTP_CONNECTIONS` parallel workers, each with its own database connection and SMTP connection.
///
/// Per message: claim the `(user, D)` row (only the winner sends), send, retry transient failures
/// with exponential backoff within the run, then record `sent`, `retry` or `failed`. A crash between
/// claim and record leaves a `sending` row whose session is gone; the next run takes it over and
/// resends with the same `Message-ID`.
struct Dispatcher {
    let configuration: NotifierConfiguration
    let composer: MailComposer
    let store: NotificationStore
    let runDate: CalendarDate
    let runID: Int64?
    let logger: Logger
    /// Makes one transport per worker (SMTP through libcurl in production).
    let makeTransport: @Sendable () throws -> any MailTransport
    /// The daemon's stop request and progress hook (nil for a run by hand).
    let control: RunControl?

    /// After this many messages in a row failed because the server was unusable, the remaining
    /// ones are recorded for a later retry without trying again now.
    static let unavailableLimit = 3

    /// Delivers `jobs` and returns what happened. A database failure stops the affected worker;
    /// its unprocessed jobs stay unclaimed (still due) and the error is returned.
    func deliver(_ jobs: [DeliveryJob]) -> DeliveryResult {
        let queue = Locked(jobs[...])
        let result = Locked(DeliveryResult())
        let workers = max(1, min(configuration.smtp.connections, jobs.count))
        guard !jobs.isEmpty else { return DeliveryResult() }
        WorkerPool.run(count: workers, name: "sileme-send") { _ in
            do {
                let db = try PGConnection(configuration.databaseURL)
                let transport = try makeTransport()
                while control?.stopRequested != true, let job = queue.withLock({ $0.popFirst() }) {
                    let outcome = try deliver(job, db: db, transport: transport, result: result)
                    let handled = result.withLock { $0.add(outcome); return $0.handled }
                    control?.progress(RunProgress(evaluated: 0, handled: handled, due: jobs.count))
                }
            } catch {
                result.withLock { $0.errors.append(error) }
            }
        }
        var final = result.withLock { $0 }
        final.notStarted = queue.withLock { $0.count }
        return final
    }

    /// Claims, sends and records one job.
    private func deliver(_ job: DeliveryJob, db: PGConnection, transport: any MailTransport,
                         result: Locked<DeliveryResult>) throws -> JobOutcome {
        guard let claim = try store.claim(db, job: job, runDate: runDate, runID: runID,
                                          newMessageID: composer.newMessageID(for: job, runDate: runDate)) else {
            return .busyElsewhere
        }
        let bytes = composer.message(for: job, runDate: runDate, messageID: claim.messageID).rendered()
        var attempts = 0
        var outcome: SendOutcome
        if result.withLock({ $0.consecutiveUnavailable >= Self.unavailableLimit }) {
            outcome = .transient(reason: "not attempted: the mail server was unavailable for the previous messages",
                                 serverUnavailable: true)
        } else {
            repeat {
                if attempts > 0 {
                    Thread.sleep(forTimeInterval: configuration.smtp.retryBackoffSeconds * pow(2, Double(attempts - 1)))
                }
                attempts += 1
                outcome = transport.send(from: composer.from.address, to: job.email.address, message: bytes)
            } while attempts < configuration.smtp.retryAttempts && { if case .transient = outcome { true } else { false } }()
        }
        let fields: Logger.Metadata = [
            "notifier_event": "", "run_date": "\(runDate)", "user_id": "\(job.userID)",
            "miss_days": "\(job.missedDays)", "recipient": "\(job.email.masked)",
            "smtp_message_id": "<\(claim.messageID)>", "attempts": "\(attempts)",
            "resend": "\(claim.tookOver)",
        ]
        let reply = outcome.text.replacingOccurrences(of: job.email.address, with: job.email.masked, options: .caseInsensitive)
        switch outcome {
        case .accepted:
            try store.markSent(db, claim: claim, attempts: attempts, reply: reply)
            result.withLock { $0.consecutiveUnavailable = 0 }
            logger.info("notification sent for user \(job.userID) (\(job.missedDays) days missed)",
                        metadata: fields.merging(["notifier_event": "\(NotifierEvent.notificationSent.rawValue)",
                                                  "message_id": "\(NotifierEvent.notificationSent.messageID)",
                                                  "smtp_reply": "\(reply)"]) { $1 })
            return .sent
        case .transient(_, let serverDown):
            return try recordFailure(job, claim: claim, attempts: attempts, permanent: false, serverDown: serverDown,
                                     reply: reply, fields: fields, db: db, result: result)
        case .permanent:
            return try recordFailure(job, claim: claim, attempts: attempts, permanent: true, serverDown: false,
                                     reply: reply, fields: fields, db: db, result: result)
        }
    }

    private func recordFailure(_ job: DeliveryJob, claim: Claim, attempts: Int, permanent: Bool, serverDown: Bool,
                               reply: String, fields: Logger.Metadata, db: PGConnection,
                               result: Locked<DeliveryResult>) throws -> JobOutcome {
        let nextAttempt = permanent
            ? nil : Date().addingTimeInterval(Self.laterRetryDelay(previousAttempts: claim.previousAttempts + attempts,
                                                                base: configuration.retryLaterSeconds))
        try store.markFailed(db, claim: claim, attempts: attempts, permanent: permanent, error: reply, nextAttempt: nextAttempt)
        result.withLock { $0.consecutiveUnavailable = serverDown ? $0.consecutiveUnavailable + 1 : 0 }
        logger.error("notification failed for user \(job.userID): \(reply)",
                     metadata: fields.merging(["notifier_event": "\(NotifierEvent.notificationFailed.rawValue)",
                                               "message_id": "\(NotifierEvent.notificationFailed.messageID)",
                                               "permanent": "\(permanent)", "error": "\(reply)"]) { $1 })
        return permanent ? .failedPermanently : (serverDown ? .serverUnavailable : .failedTransiently)
    }

    /// When a transiently failed mail is due again later the same day: `RETRY_LATER_SECONDS`
    /// (5 minutes) after the first run's attempts, doubling with each round, at most 2 hours apart.
    static func laterRetryDelay(previousAttempts: Int, base: TimeInterval) -> TimeInterval {
        min(7200, base * pow(2, Double(max(0, previousAttempts / 3 - 1))))
    }
}
