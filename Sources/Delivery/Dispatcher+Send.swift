import Foundation
import Logging
import Rule
import Store
import Systemd
import Values

extension Dispatcher {
    /// The longest wait between two attempts within a run (a server's `Retry-After` asking for
    /// more moves the next attempt to a later pass, at that time).
    static let longestWaitInRun: TimeInterval = 30

    /// Sends one claimed job through `channel` (with the run's retries) and queues its outcome for
    /// recording. After `unavailableLimit` messages in a row found the channel's server unusable,
    /// the job is not attempted and kept for a later retry.
    func send(_ job: DeliveryJob, claim: Claim, through channel: any DeliveryChannel, recorder: ResultRecorder,
              result: Locked<DeliveryResult>) -> JobOutcome {
        let sent: Result<String, ChannelFailure>
        let attempts: Int
        // The servers every attempt passed over (mail's relays), counted per relay with the outcome.
        var passedOver: [String] = []
        if result.withLock({ $0.consecutiveUnavailable[job.channel, default: 0] >= Self.unavailableLimit }) {
            (sent, attempts) = (.failure(.transient("not attempted: \(channel.words.server) was unavailable for the previous messages",
                                                    .serverUnusable)), 0)
        } else {
            let attempt = channel.attempt(job, claim: claim)
            let counted: ChannelAttempt = { () throws(ChannelFailure) in
                defer { passedOver += channel.passedOver }
                return try attempt()
            }
            (sent, attempts) = Self.attempting(counted, limit: configuration.smtp.retryAttempts,
                                               backoff: configuration.smtp.retryBackoffSeconds) { [control] wait in
                control.stop.sleep(wait, alive: { control.alive() })
            }
        }
        let words = channel.words
        var fields: Logger.Metadata = [
            "run_date": "\(runDate)", "user_id": "\(job.userID)",
            "miss_days": "\(job.missedDays)", "recipient": "\(job.recipientMasked)",
            words.messageIDField: "\(words.id(claim.messageID))",
            "attempts": "\(attempts)", "resend": "\(claim.tookOver)", "notification_kind": "\(job.kind.rawValue)",
            "notification_channel": "\(job.channel.rawValue)", "contact_position": "\(job.position)",
        ]
        if let alert = job.inReplyTo { fields["in_reply_to"] = "\(words.id(alert))" }
        if let date = job.notificationDate { fields["notification_date"] = "\(date)" }
        switch sent {
        case .success(let answer):
            let reply = Self.masked(answer, job)
            let relay = channel.acceptedBy
            recorder.record(RecordedOutcome(logID: claim.logID, status: .sent, attempts: attempts, text: reply,
                                            nextAttempt: nil, at: Date(), relay: relay, passedOver: passedOver))
            result.withLock { $0.consecutiveUnavailable[job.channel] = 0 }
            logger.info("\(channel.describe(job)) sent for user \(job.userID) to \(job.recipientMasked)",
                        metadata: fields.merging(NotifierEvent.notificationSent.metadata) { $1 }.merging([
                            words.replyField: "\(reply)"]) { $1 }.merging(relay.map { ["relay": "\($0)"] } ?? [:]) { $1 })
            return .sent
        case .failure(let failure):
            let reply = Self.masked(failure.reason, job)
            // A later pass, not before the server's `Retry-After`.
            let nextAttempt = failure.isPermanent
                ? nil : Date().addingTimeInterval(max(failure.retryAfter ?? 0, Self.laterRetryDelay(previousAttempts: claim.previousAttempts + attempts,
                                                                                                    base: configuration.retryLaterSeconds)))
            recorder.record(RecordedOutcome(logID: claim.logID, status: failure.status, attempts: attempts,
                                            text: reply, nextAttempt: nextAttempt, at: Date(), undeliverable: failure.undeliverable,
                                            passedOver: passedOver))
            result.withLock {
                $0.consecutiveUnavailable[job.channel] = failure.serverUnusable ? $0.consecutiveUnavailable[job.channel, default: 0] + 1 : 0
            }
            logger.error("\(channel.describe(job)) failed for user \(job.userID) to \(job.recipientMasked): \(reply)",
                         metadata: fields.merging(NotifierEvent.notificationFailed.metadata) { $1 }.merging([
                            "permanent": "\(failure.isPermanent)", "error": "\(reply)",
                            "undeliverable": "\(failure.undeliverable)"]) { $1 })
            return failure.outcome
        }
    }

    /// Makes `attempt` until it delivers, fails other than transiently, or `limit` attempts were
    /// made. Between two, `wait`s the backoff — `backoff` seconds, doubling — or the server's
    /// longer `Retry-After`; a wait over `longestWaitInRun`, or one that `wait` ends early (the run
    /// was stopped), leaves the last failure for a later pass. Returns the last result and the
    /// attempts made.
    static func attempting(_ attempt: ChannelAttempt, limit: Int, backoff: TimeInterval,
                           wait: (TimeInterval) -> Bool) -> (Result<String, ChannelFailure>, attempts: Int) {
        var attempts = 0
        while true {
            attempts += 1
            let failure: ChannelFailure
            do {
                return (.success(try attempt()), attempts)
            } catch {
                failure = error
            }
            guard attempts < limit, failure.retriesInRun else { return (.failure(failure), attempts) }
            let seconds = max(backoff * pow(2, Double(attempts - 1)), failure.retryAfter ?? 0)
            guard seconds <= longestWaitInRun, wait(seconds) else { return (.failure(failure), attempts) }
        }
    }

    /// `text` with `job`'s address masked wherever it names it (only a text with an `@` can).
    static func masked(_ text: String, _ job: DeliveryJob) -> String {
        text.utf8.contains(UInt8(ascii: "@"))
            ? text.replacingOccurrences(of: job.email.address, with: job.email.masked, options: .caseInsensitive)
            : text
    }
}
