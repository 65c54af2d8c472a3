/// When a claim may be taken over, written once for every statement that asks (the claim itself,
/// `retry`'s targets, the daemon's retry schedule and the history report).
///
/// A claim of `(user, date)` is a `notification_logs` row in status `sending`. Made on a direct
/// connection, it records its session's backend pid (`claim_backend_pid`): while that session
/// lives the mail is in flight, and once it is gone (the process crashed or was killed) the claim
/// is abandoned at once. Through a connection pooler the backend belongs to a pooled server
/// connection that outlives the client, so such a claim records no pid and holds a lease instead:
/// it is abandoned when `claimed_at` is older than `CLAIM_LEASE_SECONDS` (the run renews the lease
/// of its claims while it sends). The next claim statement takes an abandoned claim over with the
/// same `Message-ID`.
package struct ClaimSQL: Sendable {
    /// `CLAIM_LEASE_SECONDS`.
    package let leaseSeconds: Double

    /// The condition for a lease of `leaseSeconds`.
    package init(leaseSeconds: Double) { self.leaseSeconds = leaseSeconds }

    /// SQL: a claim (or the run lock) taken at `takenAt` is still held: the direct session `pid`
    /// names still exists, or — with no pid — its lease has not run out (`leaseValid`).
    ///
    /// PostgreSQL reads `pg_stat_activity` once per transaction, at its first use: a session that
    /// connected after that moment is missing from it for the rest of the statement. So a claim
    /// taken since the statement began (by such a session) counts as held without asking — seen
    /// with two runs racing, one of whose workers connected while the other's claim statement ran.
    package static func held(pid: String, takenAt: String, leaseValid: String) -> String {
        """
        (CASE WHEN \(pid) IS NOT NULL
              THEN \(takenAt) >= statement_timestamp() OR EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = \(pid))
              ELSE \(leaseValid) END)
        """
    }

    /// SQL: the claim `row` is still held.
    private func held(_ row: String) -> String {
        Self.held(pid: "\(row).claim_backend_pid", takenAt: "\(row).claimed_at",
                  leaseValid: "\(row).claimed_at >= now() - make_interval(secs => \(leaseSeconds))")
    }

    /// SQL: the row `row` is a claim whose holder is gone or whose lease ran out (may be taken over now).
    package func abandoned(_ row: String = "n") -> String {
        "(\(row).status = 'sending' AND NOT coalesce(\(held(row)), false))"
    }

    /// SQL: the row `row` is a claim still held (a mail in flight).
    package func inFlight(_ row: String = "n") -> String {
        "(\(row).status = 'sending' AND coalesce(\(held(row)), false))"
    }

    /// SQL: when the claim `row` may be taken over, for the daemon's retry schedule: now when it is
    /// abandoned, else when its lease runs out (never, for a live direct session: NULL).
    package func takeoverTime(_ row: String = "n") -> String {
        """
        (CASE WHEN \(abandoned(row)) THEN now()
              WHEN \(row).claim_backend_pid IS NULL THEN \(row).claimed_at + make_interval(secs => \(leaseSeconds)) END)
        """
    }

    /// SQL: the failed row `row` waits for a retry whose time has come (or was never set).
    package func retryDue(_ row: String = "n") -> String {
        "(\(row).status = 'retry' AND (\(row).next_attempt_at IS NULL OR \(row).next_attempt_at <= now()))"
    }

    /// SQL: the row `row` may be (re)sent now — not sent, and skipped earlier, waiting for a
    /// retry whose time has come, or an abandoned claim. The one condition of the claim's
    /// takeover, and of every "is something still owed" question the lifecycle asks.
    package func claimableNow(_ row: String = "n") -> String {
        "(NOT \(row).email_sent AND (\(row).status = 'skipped' OR \(retryDue(row)) OR \(abandoned(row))))"
    }

    /// SQL: the row `row` is to be finished: a retry whose time has come, or an abandoned claim
    /// (a skipped row is not: it waits for the rule to say `send` again).
    package func unfinished(_ row: String = "n") -> String {
        "(\(retryDue(row)) OR \(abandoned(row)))"
    }
}
