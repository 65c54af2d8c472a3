import Foundation

/// Writes the outcomes of a run's sends on a thread and connection of its own, in micro-batches:
/// whatever has accumulated while the previous batch was being written goes out in the next
/// statement. Senders never wait for the database, and a record is written about one database
/// round trip after the server's reply — the crash window in which an accepted mail may be sent
/// again (with the same `Message-ID`) stays that small.
final class ResultRecorder: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [RecordedOutcome] = []
    private var finishing = false
    private var failure: (any Error)?
    private let done = DispatchSemaphore(value: 0)

    /// Opens the recorder's connection and starts its thread.
    init(conninfo: Secret, store: NotificationStore) throws {
        let db = Transfer(value: try PGConnection(conninfo, applicationName: "sileme-notifier (recorder)"))
        let thread = Thread { [self] in
            loop(db: db.value, store: store)
            done.signal()
        }
        thread.name = "sileme-record"
        thread.start()
    }

    /// Queues an outcome for writing.
    func record(_ outcome: RecordedOutcome) {
        condition.lock()
        pending.append(outcome)
        condition.signal()
        condition.unlock()
    }

    /// Writes everything queued, stops the thread, and returns the error that stopped writing, if any
    /// (then the unwritten rows stay `sending` under a closed session: the next run takes them over).
    func finish() -> (any Error)? {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
        done.wait()
        return failure
    }

    private func loop(db: PGConnection, store: NotificationStore) {
        while true {
            condition.lock()
            while pending.isEmpty && !finishing { condition.wait() }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            let last = finishing && batch.isEmpty
            condition.unlock()
            if last { return }
            do {
                try store.record(db, batch)
            } catch {
                condition.lock()
                failure = error
                condition.unlock()
                return
            }
        }
    }
}
