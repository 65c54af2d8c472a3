import Config
import Foundation
import Logging
import Mail
import Rule
import Store
import Systemd
import Values

/// Sends the due messages of one run with the claim → send → record protocol of docs/delivery.md, over
/// `SMTP_CONNECTIONS` parallel workers, each with its own database connection and its own set of
/// channels (`DeliveryChannel`: mail, webhook events), each channel with its own connection.
///
/// Each worker claims a batch of jobs in one statement (only the winner of a row sends it), sends
/// them one by one — retrying transient failures with exponential backoff within the run, never a
/// mail whose outcome is unknown — and
/// hands each outcome to the `ResultRecorder`, which writes `sent`, `retry` or `failed` in
/// micro-batches on its own connection. A crash leaves `sending` rows whose session is gone; the
/// next run takes them over and sends with the same `Message-ID` (a resend only for a mail the
/// server had accepted in the last moment before the crash).
///
/// It knows no channel by name: a job goes to the worker's channel for `job.channel`, and what
/// the channel's attempt throws (`ChannelFailure`) is all the retries, records and tally read.
package struct Dispatcher {
    package let configuration: NotifierConfiguration
    package let store: NotificationStore
    package let runDate: CalendarDate
    package let runID: Int64?
    package let logger: Logger
    /// Makes each worker's channels.
    package let channels: DeliveryChannels
    /// The stop signal and the progress hooks.
    package let control: RunControl
    /// Where the senders' and the recorder's sessions come from (the daemon's); nil: their own.
    package var sessions: SessionKeeper? = nil

    /// A dispatcher sending through `channels`.
    package init(configuration: NotifierConfiguration, store: NotificationStore, runDate: CalendarDate, runID: Int64?,
                 logger: Logger, channels: DeliveryChannels, control: RunControl, sessions: SessionKeeper? = nil) {
        self.configuration = configuration
        self.store = store
        self.runDate = runDate
        self.runID = runID
        self.logger = logger
        self.channels = channels
        self.control = control
        self.sessions = sessions
    }

    /// A dispatcher sending through the notifier's channels (`DeliveryChannels.standard`), mail
    /// over the transports `makeTransport` makes (SMTP through libcurl in production).
    package init(configuration: NotifierConfiguration, composer: MailComposer, store: NotificationStore, runDate: CalendarDate,
                 runID: Int64?, logger: Logger, makeTransport: @escaping @Sendable () throws -> any MailTransport,
                 control: RunControl, sessions: SessionKeeper? = nil) {
        self.init(configuration: configuration, store: store, runDate: runDate, runID: runID, logger: logger,
                  channels: .standard(configuration: configuration, composer: composer, runDate: runDate, makeTransport: makeTransport),
                  control: control, sessions: sessions)
    }

    /// After this many messages in a row failed because the server was unusable, the remaining
    /// ones are recorded for a later retry without trying again now.
    package static let unavailableLimit = 3
    /// Jobs a worker claims in its first statement. A check-in committed during the run cancels
    /// every mail not yet claimed (the claim's re-check), so what a worker has claimed ahead bounds
    /// what can still go out after it; later statements claim as much as the worker has lately
    /// sent in about a second (`ClaimPace`): 4 on a mail server answering in 0.25 s, up to 32 on
    /// fast ones, 1 on slower ones (docs/guards.md).
    package static let claimBatch = 4

    /// How many jobs a worker claims per statement: as many as it has lately sent in `ahead`
    /// (1 s) at its recent pace — between 1 and `limit` (32) — and `Dispatcher.claimBatch` until
    /// it has sent any. A check-in is so honoured within about a second however fast or slow the
    /// server, and a fast channel (a webhook endpoint answering in a millisecond) pays one claim
    /// statement per 32 messages instead of per 4.
    package struct ClaimPace {
        /// The sending time a worker claims ahead.
        package static let ahead: TimeInterval = 1
        /// The most jobs per claim statement.
        package static let limit = 32
        /// The recent seconds per job (half the last batch's, half the earlier average); nil
        /// before the first batch.
        package private(set) var secondsPerJob: Double?

        package init() {}

        /// The jobs to claim next.
        package var batch: Int {
            guard let secondsPerJob else { return Dispatcher.claimBatch }
            guard secondsPerJob > 0 else { return Self.limit }
            return Int(max(1, min(Double(Self.limit), (Self.ahead / secondsPerJob).rounded(.down))))
        }

        /// Notes that a batch of `jobs` took `seconds` from its claim to its last outcome.
        package mutating func record(jobs: Int, seconds: TimeInterval) {
            guard jobs > 0 else { return }
            let sample = max(0, seconds) / Double(jobs)
            secondsPerJob = secondsPerJob.map { ($0 + sample) / 2 } ?? sample
        }
    }

    /// Delivers `given` and returns what happened, each outcome counted into `tally` (the plan's,
    /// so the run has one). A database failure stops the affected worker; its unclaimed jobs
    /// stay due and the error is returned.
    package func deliver(_ given: [DeliveryJob], into tally: RunTally = RunTally()) -> DeliveryResult {
        deliver(Feed(unique(given)), into: tally)
    }

    /// `jobs`, one per delivery key (a claim statement must not name a row twice), in order.
    package func unique(_ jobs: [DeliveryJob]) -> [DeliveryJob] {
        var seen = Set<String>()
        return jobs.filter { seen.insert(Self.key($0, runDate: runDate)).inserted }
    }

    /// Delivers what `feed` gives (each delivery key once: its lists and its reader's stream
    /// hold no key twice), as `deliver(_:into:)` does; the feed is closed when this returns, so
    /// that a reader still streaming into it ends. Jobs never taken count as `notStarted`.
    package func deliver(_ feed: Feed, into tally: RunTally = RunTally()) -> DeliveryResult {
        defer { feed.close() }
        guard feed.due > 0 else { return DeliveryResult(tally: tally) }
        let workers = max(1, min(configuration.smtp.connections, feed.due))
        let recorder: ResultRecorder
        do {
            recorder = try ResultRecorder(conninfo: configuration.databaseURL, schema: configuration.databaseSchema, store: store, runDate: runDate,
                                          patience: configuration.databaseReconnectSeconds, backlog: workers,
                                          onRetry: Self.reconnectNotice(logger), onWait: { [control] in control.alive() },
                                          stop: control.stop, keeper: sessions)
        } catch {
            var failed = DeliveryResult(tally: tally)
            failed.errors.append(error)
            failed.notStarted = feed.remaining
            return failed
        }
        let shared = Shared(feed: feed, tally: tally, recorder: recorder, workers: workers)
        // Senders that get no database session within `PGConnection.sessionWaitSeconds` (a pooler's
        // pool smaller than the run's sessions) drop out: the run goes on with the others.
        let refused = Locked<[DatabaseError]>([])
        WorkerPool.run(count: workers, name: "sileme-send") { index in
            do {
                let db: ReconnectingConnection
                do {
                    db = try ReconnectingConnection(configuration.databaseURL, schema: configuration.databaseSchema,
                                                    patience: configuration.databaseReconnectSeconds,
                                                    onRetry: Self.reconnectNotice(logger), onWait: { control.alive() },
                                                    stop: control.stop, keeper: sessions)
                } catch let error as DatabaseError where error.sessionWait {
                    refused.withLock { $0.append(error) }
                    logger.warning("sender \(index + 1) of \(workers) has no database session (\(error.message)); the run goes on with fewer senders",
                                   metadata: ["run_date": "\(runDate)"])
                    return
                }
                try work(db: db, channels: try channels.forWorker(control), shared: shared)
                // This worker's claims are held by its session: keep it open until their outcomes
                // are written, or a racing process would take them for abandoned and send again.
                recorder.waitUntilRecorded()
            } catch {
                shared.result.withLock { $0.errors.append(error) }
            }
        }
        if let failure = recorder.finish() { shared.result.withLock { $0.errors.append(failure) } }
        if let failure = recorder.contactsNotMarked { shared.result.withLock { $0.contactsNotMarked = failure } }
        // Not one sender had a session: the run could send nothing.
        if let first = refused.withLock({ $0.count == workers ? $0.first : nil }) { shared.result.withLock { $0.errors.append(first) } }
        feed.close()
        var final = shared.result.withLock { $0 }
        final.notStarted += feed.remaining
        return final
    }

    /// Claims `batch` in one statement. Should that statement fail for a row's data (SQLSTATE
    /// class 22 or 23: a constraint of the app's that one user's row breaks, say), each job is
    /// claimed on its own, and a job whose own statement fails too is left out with the reason
    /// (logged as `notification_skipped`; the user is due again at the next run): one user never
    /// stops the run. Users deleted since the evaluation come back in `gone`.
    func claim(_ batch: [DeliveryJob], messageIDs: [String], db: ReconnectingConnection)
        throws -> (ClaimBatch, refused: [Int: String]) {
        let supersede = configuration.rule.supersede
        do {
            let claimed = try db.perform {
                try store.claim($0, jobs: batch, runDate: runDate, runID: runID, newMessageIDs: messageIDs, supersede: supersede)
            }
            return (claimed, [:])
        } catch let error as DatabaseError where error.isDataError {
            var claimed = ClaimBatch()
            var refused: [Int: String] = [:]
            for (index, (job, messageID)) in zip(batch, messageIDs).enumerated() {
                do {
                    let one = try db.perform {
                        try store.claim($0, jobs: [job], runDate: runDate, runID: runID, newMessageIDs: [messageID], supersede: supersede)
                    }
                    if let claim = one.claims[0] { claimed.claims[index] = claim }
                    if let reason = one.cancelled[0] { claimed.cancelled[index] = reason }
                    if one.gone.contains(0) { claimed.gone.insert(index) }
                } catch let error as DatabaseError where error.isDataError {
                    refused[index] = "\(error)"
                    logger.error("notification skipped for user \(job.userID): its claim failed: \(error)",
                                 metadata: NotifierEvent.notificationSkipped.metadata.merging([
                                    "run_date": "\(runDate)", "user_id": "\(job.userID)", "miss_days": "\(job.missedDays)",
                                    "skip_reason": "claim_error", "detail": "\(error)",
                                    "notification_kind": "\(job.kind.rawValue)",
                                 ]) { $1 })
                }
            }
            return (claimed, refused)
        }
    }

    /// Logs a broken database connection that the run is reconnecting.
    package static func reconnectNotice(_ logger: Logger) -> @Sendable (DatabaseError, TimeInterval) -> Void {
        { error, delay in
            logger.warning("database connection lost during the run: \(error); reconnecting in \(String(format: "%.2g", delay)) s",
                           metadata: NotifierEvent.databaseReconnecting.metadata)
        }
    }

    /// The delivery key of `job` on `runDate`: (user, date, kind, channel, contact).
    package static func key(_ job: DeliveryJob, runDate: CalendarDate) -> String {
        "\(job.userID)|\(job.date(runDate: runDate))|\(job.kind.rawValue)|\(job.channel.rawValue)|\(job.contactKey)"
    }

    /// When a transiently failed mail is due again later the same day: `RETRY_LATER_SECONDS`
    /// (5 minutes) after the first run's attempts, doubling with each round, at most 2 hours apart.
    package static func laterRetryDelay(previousAttempts: Int, base: TimeInterval) -> TimeInterval {
        min(7200, base * pow(2, Double(max(0, previousAttempts / 3 - 1))))
    }
}
