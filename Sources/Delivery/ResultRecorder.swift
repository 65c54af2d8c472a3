import Config
import Foundation
import Store
import Values

/// Writes the outcomes of a run's sends on a thread and connection of its own, in micro-batches:
/// whatever has accumulated while the previous batch was being written goes out in the next
/// statement. A record is written about one database round trip after the server's reply, and no
/// sender starts a message while more than `backlog` outcomes are unwritten: the crash window in
/// which an accepted mail may be sent again (with the same `Message-ID`) stays bounded however far
/// a loaded machine lets the recorder's thread fall behind.
///
/// When the connection breaks (PostgreSQL restarted), the recorder connects again and writes the
/// same batch again (recording is idempotent) for up to `DATABASE_RECONNECT_SECONDS`; meanwhile
/// `waitUntilWritable` holds the senders back, so no mail is sent that could not be recorded.
/// If the database stays away, the recorder gives up, the senders stop, and the unrecorded rows
/// stay `sending` under a closed session: the next run takes them over.
///
/// It also renews the lease of the run's claims every `renewEvery` seconds (a quarter of
/// `CLAIM_LEASE_SECONDS`), so that a claim made through a connection pooler is never taken for an
/// abandoned one while this process lives.
///
/// And it marks the contacts of the accepted messages `ok` in `contact_status`, `okBatch` rows at
/// a time once their outcomes are written (the rest when it finishes): in a statement of its own,
/// never in the recording one, which bounds the crash window; in batches, so that a run holds a
/// batch of their ids, not one per mail of the day.
///
/// Sendable unchecked, and it must stay so: the senders and the recorder's thread meet on its
/// state under one `NSCondition` (they wait on it: a `Mutex` cannot wait), and its connection is
/// its own thread's alone.
package final class ResultRecorder: @unchecked Sendable {
    /// The accepted rows whose contacts are marked `ok` in one statement.
    package static let okBatch = 1000

    private let condition = NSCondition()
    private var pending: [RecordedOutcome] = []
    private var finishing = false
    private var reconnecting = false
    /// A batch taken from `pending` is being written.
    private var writing = false
    /// How many outcomes were queued, and how many of the first of them are written: a sender
    /// waits while more than `backlog` are unwritten (`waitUntilWritable`).
    private var queued = 0
    private var written = 0
    private let backlog: Int
    private var failure: (any Error)?
    /// Why contacts of accepted messages were not marked `ok` (the first such error; the
    /// outcomes were written all the same).
    private var okFailure: (any Error)?
    private let done = DispatchSemaphore(value: 0)
    private let stop: StopSignal
    private let renewEvery: TimeInterval

    /// Opens the recorder's connection and starts its thread. `onRetry` hears of each broken
    /// connection; `onWait` is called at least once a second while reconnecting. A raised `stop`
    /// ends a reconnect wait (the recorder gives up; the unwritten rows are taken over next run).
    /// `backlog` is the most outcomes left unwritten when a sender starts a message (the run's
    /// senders: one each, so that they never wait for the database unless the recorder falls behind).
    package init(conninfo: Secret, schema: DatabaseSchema, store: NotificationStore, runDate: CalendarDate, patience: TimeInterval,
                 backlog: Int,
         onRetry: @escaping @Sendable (DatabaseError, TimeInterval) -> Void = { _, _ in },
         onWait: @escaping @Sendable () -> Void = {}, stop: StopSignal = StopSignal(), keeper: SessionKeeper? = nil) throws {
        self.stop = stop
        self.backlog = max(0, backlog)
        renewEvery = store.claimSQL.leaseSeconds / 4
        let db = try ReconnectingConnection(
            conninfo, schema: schema, applicationName: "sileme-notifier (recorder)", patience: patience,
            onRetry: { [weak self] error, delay in
                self?.setReconnecting(true)
                onRetry(error, delay)
            }, onWait: onWait, stop: stop, keeper: keeper)
        let transfer = Transfer(value: db)
        let thread = Thread { [self] in
            loop(db: transfer.value, store: store, runDate: runDate)
            done.signal()
        }
        thread.name = "sileme-record"
        thread.start()
    }

    /// Queues an outcome for writing.
    package func record(_ outcome: RecordedOutcome) {
        condition.lock()
        pending.append(outcome)
        queued += 1
        condition.signal()
        condition.unlock()
    }

    /// Waits while the recorder is reconnecting, or more than `backlog` outcomes are unwritten
    /// (calling `alive` about once a second), and says whether outcomes can still be recorded:
    /// false once the recorder gave up, or when the stop signal was raised while it reconnected.
    ///
    /// A sender calls it before each message: then a process killed at any instant leaves at
    /// most `backlog` accepted, unrecorded messages plus those in flight — two per connection
    /// with a backlog of one per sender — however far the recorder's thread has fallen behind on
    /// a loaded machine. Waiting for every earlier outcome instead (a backlog of none) halved
    /// the mails per second: each message would wait a database round trip.
    package func waitUntilWritable(alive: () -> Void = {}) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while (reconnecting || queued - written > backlog) && failure == nil {
            if stop.isStopped && reconnecting { return false }
            _ = condition.wait(until: Date().addingTimeInterval(1))
            condition.unlock()
            alive()
            condition.lock()
        }
        return failure == nil
    }

    /// Waits until every outcome queued so far is written (or the recorder gave up). A send worker
    /// calls it before it closes its connection: a claim is held by its session, and a claim whose
    /// session closed before its outcome was written looks abandoned — another process (a second
    /// daemon's pass started by the same event) would take it over and send the message again.
    package func waitUntilRecorded() {
        condition.lock()
        defer { condition.unlock() }
        while (!pending.isEmpty || writing) && failure == nil {
            _ = condition.wait(until: Date().addingTimeInterval(1))
        }
    }

    /// After `finish`: why the contacts of some accepted messages were not marked `ok`, if a
    /// statement marking them failed (nil: every accepted message's contact is marked).
    package var contactsNotMarked: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return okFailure
    }

    /// False once the recorder gave up (the database stayed away): send nothing more.
    package var isWritable: Bool {
        condition.lock()
        defer { condition.unlock() }
        return failure == nil
    }

    /// Writes everything queued, stops the thread, and returns the error that stopped writing, if any
    /// (then the unwritten rows stay `sending` under a closed session: the next run takes them over).
    package func finish() -> (any Error)? {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
        done.wait()
        return failure
    }

    private func loop(db: ReconnectingConnection, store: NotificationStore, runDate: CalendarDate) {
        var nextRenewal = Date().addingTimeInterval(renewEvery)
        // The accepted rows written whose contacts are not yet marked `ok`.
        var accepted: [Int64] = []
        func markOK() {
            guard !accepted.isEmpty else { return }
            do {
                try db.perform { try store.markContactsOK($0, logIDs: accepted) }
            } catch {
                condition.lock()
                okFailure = okFailure ?? error
                condition.unlock()
            }
            accepted.removeAll(keepingCapacity: true)
        }
        while true {
            condition.lock()
            while pending.isEmpty && !finishing && Date() < nextRenewal { _ = condition.wait(until: nextRenewal) }
            let batch = pending
            let through = queued
            pending.removeAll(keepingCapacity: true)
            let last = finishing && batch.isEmpty
            writing = !batch.isEmpty
            condition.unlock()
            if last {
                markOK()
                return
            }
            do {
                if !batch.isEmpty {
                    try db.perform { try store.record($0, batch) }
                    condition.lock()
                    writing = false
                    written = through
                    condition.broadcast()
                    condition.unlock()
                    accepted += batch.lazy.filter { $0.status == .sent }.map(\.logID)
                    if accepted.count >= Self.okBatch { markOK() }
                }
                if Date() >= nextRenewal {
                    try db.perform { try store.renewClaims($0) }
                    nextRenewal = Date().addingTimeInterval(renewEvery)
                }
                setReconnecting(false)
            } catch {
                condition.lock()
                failure = error
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    private func setReconnecting(_ value: Bool) {
        condition.lock()
        if reconnecting != value {
            reconnecting = value
            condition.broadcast()
        }
        condition.unlock()
    }
}
