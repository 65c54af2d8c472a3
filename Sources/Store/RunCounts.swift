import Rule

/// The counts of one run, reported on `run_finished` and stored in `notifier_runs`.
public struct RunCounts: Sendable, Equatable, Codable {
    /// Users decided `send` (due, valid, not yet notified).
    public var due = 0
    /// Mails the server accepted in this run.
    public var sent = 0
    /// Mails that failed (transient after retries, or permanent); due again later.
    public var failed = 0
    /// Of `failed`, the permanent (5xx) ones.
    public var failedPermanently = 0
    /// Users whose streak was already notified.
    public var alreadyNotified = 0
    /// Users past the catch-up window.
    public var stale = 0
    /// Users skipped for an unusable emergency email.
    public var invalidEmail = 0
    /// Users skipped for an empty name.
    public var invalidName = 0
    /// Due users whose row another live session holds (or whose retry time has not come).
    public var busyElsewhere = 0
    /// Due users deleted from `users` during the run (the app's account deletion): no mail.
    public var gone = 0
    /// Due users whose claim statement failed: skipped with the reason, due again at the next run.
    public var claimErrors = 0
    /// Users whose newer account (same contact and name) checked in after their `L'`.
    public var superseded = 0
    /// Users away (`paused_until ≥ D`) whose missed days reached the threshold.
    public var paused = 0
    /// Due users whose claim found them no longer due (a check-in dated `D` or `D + 1`, a pause or a
    /// newer account committed during the run): not mailed.
    public var cancelled = 0
    /// Users with a check-in dated after `D + 1`, ignored by the rule (a wrong device clock).
    public var futureIgnored = 0
    /// Webhook events delivered and failed (`sent` and `failed` count mails).
    public var webhookSent = 0
    public var webhookFailed = 0

    /// Creates zero counts.
    public init() {}

    /// Counts one decision of the rule.
    public mutating func count(_ decision: Decision) {
        switch decision {
        case .send: due += 1
        case .alreadyNotified: alreadyNotified += 1
        case .stale: stale += 1
        case .invalidEmail: invalidEmail += 1
        case .invalidName: invalidName += 1
        case .superseded: superseded += 1
        case .paused: paused += 1
        }
    }

    /// The number of users with each decision, for the report's summary.
    public func decisionCount(_ decision: Decision) -> Int {
        switch decision {
        case .send: due
        case .alreadyNotified: alreadyNotified
        case .stale: stale
        case .invalidEmail: invalidEmail
        case .invalidName: invalidName
        case .superseded: superseded
        case .paused: paused
        }
    }

    /// The guards' counts in words, those above zero (`1 superseded, 2 paused`); nil when none.
    public var guardsText: String? {
        Self.guardsText(superseded: superseded, paused: paused, cancelled: cancelled, futureIgnored: futureIgnored)
    }

    /// The guards' counts in words, those given and above zero; nil when none. One wording for
    /// `run_finished`, the dry run's summary and the history report.
    public static func guardsText(superseded: Int?, paused: Int?, cancelled: Int?, futureIgnored: Int?) -> String? {
        let parts = [(superseded, "superseded"), (paused, "paused"), (cancelled, "cancelled during the run"),
                     (futureIgnored, "with future-dated check-ins ignored")]
            .compactMap { count, what in count.flatMap { $0 > 0 ? "\($0) \(what)" : nil } }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// The decisions a summary names: the first five always, the others when counted.
    public var summarisedDecisions: [Decision] {
        Decision.allCases.filter { $0.alwaysSummarised || decisionCount($0) > 0 }
    }
}
