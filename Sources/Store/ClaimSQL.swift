/// When a claim may be taken over, written once for every statement that asks: the claim of
/// `(user, date)` is a `notification_logs` row in status `sending`, owned by the database session
/// whose backend pid it recorded. While that session lives the claim is in flight; once it is gone
/// (the process crashed or was killed) the claim is abandoned, and the next claim statement takes
/// it over with the same `Message-ID`. The claim itself, `retry`'s targets, the daemon's retry
/// schedule and the history report all use these fragments.
package enum ClaimSQL {
    /// True for a row of alias `row` whose claiming session still exists.
    private static func sessionAlive(_ row: String) -> String {
        "EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = \(row).claim_backend_pid)"
    }

    /// SQL: the row `row` is a claim whose session is gone (may be taken over now).
    package static func abandoned(_ row: String = "n") -> String {
        "(\(row).status = 'sending' AND NOT \(sessionAlive(row)))"
    }

    /// SQL: the row `row` is a claim whose session still exists (a mail in flight).
    package static func inFlight(_ row: String = "n") -> String {
        "(\(row).status = 'sending' AND \(sessionAlive(row)))"
    }
}
