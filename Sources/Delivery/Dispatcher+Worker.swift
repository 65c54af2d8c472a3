import Foundation
import Rule
import Store
import Systemd
import Values

extension Dispatcher {
    /// What a run's send workers share: the jobs not yet taken, the result, the recorder.
    struct Shared: Sendable {
        /// The jobs no worker has taken yet.
        let feed: Feed
        /// The outcomes so far.
        let result: Locked<DeliveryResult>
        /// Writes the outcomes.
        let recorder: ResultRecorder
        /// The run's jobs in all (the progress's `due`).
        let due: Int
        /// The most a worker claims at once: small runs spread over every connection.
        let share: Int

        init(feed: Feed, tally: RunTally, recorder: ResultRecorder, workers: Int) {
            self.feed = feed
            result = Locked(DeliveryResult(tally: tally))
            self.recorder = recorder
            due = feed.due
            share = max(1, feed.due / workers)
        }

        /// Takes the next `count` jobs, waiting for a reader still streaming them (none: no more).
        func take(_ count: Int) -> [DeliveryJob] {
            feed.take(count)
        }
    }

    /// One send worker: claims batches at its pace and sends each claimed job through its
    /// channel, until the jobs run out, the run is stopped or the recorder gave up.
    func work(db: ReconnectingConnection, channels: DeliveryChannels.Worker, shared: Shared) throws {
        var pace = ClaimPace()
        while !control.stopRequested && shared.recorder.isWritable {
            let started = DispatchTime.now().uptimeNanoseconds
            let batch = shared.take(min(shared.share, pace.batch))
            if batch.isEmpty { break }
            // A claim retried after a broken connection may have committed the first time:
            // then it takes its own rows over again, with the same Message-IDs.
            let messageIDs = batch.map { channels[$0.channel].newMessageID(for: $0) }
            let (claimed, refused) = try claim(batch, messageIDs: messageIDs, db: db)
            for (index, job) in batch.enumerated() {
                handle(job, claimed: claimed, refused: refused[index] != nil, at: index, channels: channels, shared: shared)
            }
            pace.record(jobs: batch.count, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        }
    }

    /// Sends `job`, the `index`th of a claim statement, if the statement won it, and counts what
    /// it came to: gone, refused, not attempted, sent or failed, cancelled, or busy elsewhere.
    private func handle(_ job: DeliveryJob, claimed: ClaimBatch, refused: Bool, at index: Int,
                        channels: DeliveryChannels.Worker, shared: Shared) {
        let (result, recorder) = (shared.result, shared.recorder)
        if claimed.gone.contains(index) || refused {
            let handled = result.withLock { result in
                if claimed.gone.contains(index) { result.tally.gone += 1 } else { result.tally.claimErrors += 1 }
                return result.handled
            }
            control.progress(RunProgress(evaluated: 0, handled: handled, due: shared.due))
            return
        }
        // No message is sent that could not be recorded: wait while the recorder reconnects;
        // stop if it gave up (these claims are taken over next run).
        guard recorder.waitUntilWritable(alive: { control.alive() }) else {
            result.withLock { $0.notStarted += 1 }
            return
        }
        let outcome: JobOutcome
        if let claim = claimed.claims[index] {
            let channel = channels[job.channel]
            // Stopped (before this message, or while it waited for the channel's turn): it
            // stays due for the next run.
            if control.stopRequested || !channel.awaitTurn(stop: control.stop) {
                recorder.record(RecordedOutcome(logID: claim.logID, status: .retry, attempts: 0,
                                                text: "not attempted: the run was stopped", nextAttempt: Date(), at: Date()))
                result.withLock { $0.notStarted += 1 }
                return
            }
            outcome = send(job, claim: claim, through: channel, recorder: recorder, result: result)
        } else if let reason = claimed.cancelled[index] {
            outcome = .cancelled
            logger.notice("\(job.kind == .alert ? "notification" : job.kind.rawValue) cancelled for user \(job.userID): no longer due (\(reason))",
                          metadata: NotifierEvent.notificationCancelled.metadata.merging([
                            "run_date": "\(runDate)", "user_id": "\(job.userID)",
                            "miss_days": "\(job.missedDays)", "cancel_reason": "\(reason)",
                            "notification_kind": "\(job.kind.rawValue)", "recipient": "\(job.recipientMasked)",
                            "notification_channel": "\(job.channel.rawValue)",
                          ]) { $1 })
        } else {
            outcome = .busyElsewhere
        }
        let handled = result.withLock { $0.add(outcome, kind: job.kind, channel: job.channel); return $0.handled }
        control.progress(RunProgress(evaluated: 0, handled: handled, due: shared.due))
    }
}
