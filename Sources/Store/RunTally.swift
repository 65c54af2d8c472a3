import Rule

/// The one tally of a run: the plan counts the rule's decisions into it, the dispatcher counts
/// every message's outcome into it, and everything that reports a run reads it through `fields`
/// — the `notifier_runs` row, the journal's `run_finished`, the metrics file and the history
/// report. A new count is one property and one entry of `fields` (and, to be stored, a column).
package struct RunTally: Sendable, Equatable {
    // MARK: The plan: the rule's decisions

    /// Users decided `send` (due, valid, not yet notified).
    package var due = 0
    /// Users whose streak was already notified.
    package var alreadyNotified = 0
    /// Users past the catch-up window.
    package var stale = 0
    /// Users skipped for an unusable emergency email.
    package var invalidEmail = 0
    /// Users skipped for an empty name.
    package var invalidName = 0
    /// Users whose newer account (same contact and name) checked in after their `L'`.
    package var superseded = 0
    /// Users away (`paused_until ≥ D`) whose missed days reached the threshold.
    package var paused = 0
    /// Users with a check-in dated after `D + 1`, ignored by the rule (a wrong device clock).
    package var futureIgnored = 0
    /// Users due whose alert is held: their missed days include an intake gap.
    package var held = 0

    // MARK: Delivery: each message's outcome

    /// Messages to contacts (on the contacts' channels: mail) their server accepted in this run.
    package var sent = 0
    /// Messages to contacts that failed (transient after retries, or permanent); due again later.
    package var failed = 0
    /// Of `failed`, the permanent (5xx) ones.
    package var failedPermanently = 0
    /// Of `failed`, those that failed because the server was unusable (drives the exit status).
    package var serverUnavailable = 0
    /// Due users whose row another live session holds (or whose retry time has not come).
    package var busyElsewhere = 0
    /// Due users deleted from `users` during the run (the app's account deletion): no mail.
    package var gone = 0
    /// Due users whose claim statement failed: skipped with the reason, due again at the next run.
    package var claimErrors = 0
    /// Due users whose claim found them no longer due (a check-in dated `D` or `D + 1`, a pause or a
    /// newer account committed during the run): not mailed.
    package var cancelled = 0
    /// Messages accepted and failed, by kind and channel: what `sent` and `failed` add up for the
    /// contacts' channels, and the app's events (`sent(on:)`).
    package var sentBy: [Key: Int] = [:]
    package var failedBy: [Key: Int] = [:]

    /// A kind of message on a channel.
    package struct Key: Sendable, Hashable {
        package var kind: DeliveryJob.Kind
        package var channel: DeliveryJob.Channel

        /// Creates the key.
        package init(_ kind: DeliveryJob.Kind, _ channel: DeliveryJob.Channel) {
            self.kind = kind
            self.channel = channel
        }
    }

    /// Creates zero counts.
    package init() {}

    // MARK: Counting

    /// Counts one decision of the rule.
    package mutating func count(_ decision: Decision) {
        switch decision {
        case .send: due += 1
        case .alreadyNotified: alreadyNotified += 1
        case .stale: stale += 1
        case .invalidEmail: invalidEmail += 1
        case .invalidName: invalidName += 1
        case .superseded: superseded += 1
        case .paused: paused += 1
        case .held: held += 1
        }
    }

    /// What one message came to.
    package enum Outcome: Sendable {
        case sent, failedTransiently, failedPermanently, serverUnavailable, busyElsewhere
        /// The claim's re-check found the user no longer due (a check-in, pause or newer account during the run).
        case cancelled
    }

    /// Counts one message's outcome, by kind and channel; a contact's message also in `sent` or
    /// `failed` (and the failures' causes), an app's event only by its key.
    package mutating func count(_ outcome: Outcome, kind: DeliveryJob.Kind = .alert, channel: DeliveryJob.Channel = .primary) {
        let key = Key(kind, channel)
        let toContact = channel.audience == .contacts
        switch outcome {
        case .busyElsewhere: busyElsewhere += 1
        case .cancelled: cancelled += 1
        case .sent:
            sentBy[key, default: 0] += 1
            if toContact { sent += 1 }
        case .failedTransiently, .failedPermanently, .serverUnavailable:
            failedBy[key, default: 0] += 1
            guard toContact else { break }
            failed += 1
            if outcome == .failedPermanently { failedPermanently += 1 }
            if outcome == .serverUnavailable { serverUnavailable += 1 }
        }
    }

    /// Messages of `kind` accepted on the contacts' channels.
    package func sentToContacts(_ kind: DeliveryJob.Kind) -> Int? { Self.total(sentBy) { $0.kind == kind && $0.channel.audience == .contacts } }
    /// Messages of `kind` that failed on the contacts' channels.
    package func failedToContacts(_ kind: DeliveryJob.Kind) -> Int? { Self.total(failedBy) { $0.kind == kind && $0.channel.audience == .contacts } }
    /// Messages accepted on `channel`, whatever their kind.
    package func sent(on channel: DeliveryJob.Channel) -> Int { Self.total(sentBy) { $0.channel == channel } ?? 0 }
    /// Messages that failed on `channel`, whatever their kind.
    package func failed(on channel: DeliveryJob.Channel) -> Int { Self.total(failedBy) { $0.channel == channel } ?? 0 }
    /// The app's events accepted and failed, all channels.
    package var eventsSent: Int { DeliveryJob.Channel.of(.app).reduce(0) { $0 + sent(on: $1) } }
    package var eventsFailed: Int { DeliveryJob.Channel.of(.app).reduce(0) { $0 + failed(on: $1) } }

    /// The sum of `counts` over the keys that match; nil when none was counted.
    private static func total(_ counts: [Key: Int], _ matches: (Key) -> Bool) -> Int? {
        let found = counts.filter { matches($0.key) }
        return found.isEmpty ? nil : found.values.reduce(0, +)
    }

    /// Messages handled so far, whatever the outcome (the progress the daemon reports).
    package var handled: Int {
        sent + failed + busyElsewhere + gone + claimErrors + cancelled + eventsSent + eventsFailed
    }

    /// Adds `other`'s counts (the dry run of an instant reports its run dates as one).
    package mutating func add(_ other: RunTally) {
        for field in Self.fields { self[keyPath: field.value] += other[keyPath: field.value] }
        serverUnavailable += other.serverUnavailable
        sentBy.merge(other.sentBy, uniquingKeysWith: +)
        failedBy.merge(other.failedBy, uniquingKeysWith: +)
    }

    /// Users skipped for bad data or a failed claim (the journal summary's `skipped`).
    package var skipped: Int { invalidEmail + invalidName + claimErrors }

    /// The number of users with each decision, for the report's summary.
    package func decisionCount(_ decision: Decision) -> Int {
        switch decision {
        case .send: due
        case .alreadyNotified: alreadyNotified
        case .stale: stale
        case .invalidEmail: invalidEmail
        case .invalidName: invalidName
        case .superseded: superseded
        case .paused: paused
        case .held: held
        }
    }

    // MARK: The one definition every report reads

    /// One count and where it appears: its name (the `run_finished` field and the history
    /// report's key), its `notifier_runs` column, its metrics outcome label.
    package struct Field: Sendable, Hashable {
        /// The journal field and the JSON key.
        package let name: String
        /// The `notifier_runs` column; nil when it is not stored.
        package let column: String?
        /// The `outcome` label of `sileme_notifier_last_run_notifications`; nil when not exported.
        package let metric: String?
        /// Whether the history report lists it per run.
        package let inHistory: Bool
        /// The count.
        package let value: WritableKeyPath<RunTally, Int> & Sendable

        package static func == (a: Field, b: Field) -> Bool { a.name == b.name }
        package func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    /// Every count a run reports, in the order the journal and the history report list them.
    package static let fields: [Field] = [
        Field(name: "due", column: "due", metric: "due", inHistory: true, value: \.due),
        Field(name: "sent", column: "sent", metric: "sent", inHistory: true, value: \.sent),
        Field(name: "failed", column: "failed", metric: "failed", inHistory: true, value: \.failed),
        Field(name: "failed_permanently", column: nil, metric: nil, inHistory: false, value: \.failedPermanently),
        Field(name: "already_notified", column: "already_notified", metric: "already_notified", inHistory: true, value: \.alreadyNotified),
        Field(name: "stale", column: "stale", metric: "stale", inHistory: true, value: \.stale),
        Field(name: "invalid_email", column: "invalid_email", metric: "invalid_email", inHistory: true, value: \.invalidEmail),
        Field(name: "invalid_name", column: "invalid_name", metric: "invalid_name", inHistory: true, value: \.invalidName),
        Field(name: "busy_elsewhere", column: "busy_elsewhere", metric: "busy_elsewhere", inHistory: true, value: \.busyElsewhere),
        Field(name: "superseded", column: "superseded", metric: "superseded", inHistory: true, value: \.superseded),
        Field(name: "paused", column: "paused", metric: "paused", inHistory: true, value: \.paused),
        Field(name: "held", column: "held", metric: "held", inHistory: true, value: \.held),
        Field(name: "cancelled", column: "cancelled", metric: "cancelled", inHistory: true, value: \.cancelled),
        Field(name: "future_ignored", column: "future_ignored", metric: "future_check_in_ignored", inHistory: true, value: \.futureIgnored),
        Field(name: "gone", column: "gone", metric: "gone", inHistory: false, value: \.gone),
        Field(name: "claim_errors", column: "claim_errors", metric: "claim_error", inHistory: false, value: \.claimErrors),
    ]

    /// The counts stored in `notifier_runs`.
    package static var storedFields: [Field] { fields.filter { $0.column != nil } }

    /// The tally of a `notifier_runs` row read with `storedFields`' columns (NULL counts as 0).
    package init(stored row: PGRow) {
        self.init()
        for field in Self.storedFields {
            guard let column = field.column, let value = row.int(column) else { continue }
            self[keyPath: field.value] = value
        }
    }

    /// The values of `fields` by name.
    package var byName: [(name: String, value: Int)] { Self.fields.map { ($0.name, self[keyPath: $0.value]) } }

    // MARK: Words

    /// The guards' counts in words, those above zero (`1 superseded, 2 paused`); nil when none.
    package var guardsText: String? {
        Self.guardsText(superseded: superseded, paused: paused, cancelled: cancelled, futureIgnored: futureIgnored)
    }

    /// The guards' counts in words, those given and above zero; nil when none. One wording for
    /// `run_finished`, the dry run's summary and the history report.
    package static func guardsText(superseded: Int?, paused: Int?, cancelled: Int?, futureIgnored: Int?) -> String? {
        let parts = [(superseded, "superseded"), (paused, "paused"), (cancelled, "cancelled during the run"),
                     (futureIgnored, "with future-dated check-ins ignored")]
            .compactMap { count, what in count.flatMap { $0 > 0 ? "\($0) \(what)" : nil } }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// The decisions a summary names: the first five always, the others when counted.
    package var summarisedDecisions: [Decision] {
        Decision.allCases.filter { $0.alwaysSummarised || decisionCount($0) > 0 }
    }
}
