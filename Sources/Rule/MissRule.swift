import Values

/// The alert rule of docs/rule.md, as a pure function of dates and stored facts.
///
/// With run date `D` and `L` the latest check-in before `D`, the consecutive missed days are
/// `m = (D − L') − 1` where `L' = max(L, paused_until)`. A user is due when
/// `threshold ≤ m ≤ threshold + catchUp`; beyond that the user is stale. A check-in on `D` or
/// `D + 1`, or no check-in at all, means no mail (the batch query leaves those users out); a
/// check-in dated after `D + 1` is ignored (bad data: neither cancels nor counts as `L`). Once a
/// mail of the streak was accepted, no other mail follows. The guards of docs/guards.md: a user
/// away (`paused_until ≥ D`) is `paused`; a user whose newer account (same contact, same cleaned
/// name) checked in after `L'` is `superseded` (unless `supersede` is off).
package struct MissRule: Sendable, Equatable {
    /// `MISS_THRESHOLD_DAYS`: missed days that trigger the alert (default 2).
    package let thresholdDays: Int
    /// `CATCH_UP_DAYS`: how many more days a missed alert is still sent (default 7).
    package let catchUpDays: Int
    /// `SUPERSEDE`: whether a newer account of the same person silences the old one (default on).
    package let supersede: Bool
    /// Whether second-tier contacts wait for the escalation (`ESCALATE_AFTER` other than 0, the
    /// default): with escalation off they are alerted with the first tier, else nobody would
    /// ever tell them.
    package var secondTierWaits: Bool

    /// Creates the rule.
    package init(thresholdDays: Int, catchUpDays: Int, supersede: Bool = true, secondTierWaits: Bool = true) {
        self.thresholdDays = thresholdDays
        self.catchUpDays = catchUpDays
        self.supersede = supersede
        self.secondTierWaits = secondTierWaits
    }

    /// The latest check-in date the rule trusts on `runDate`: `D + 1` (a phone a zone ahead).
    /// Later dates are a wrong device clock; they neither cancel nor count as `L`.
    package func latestTrustedCheckIn(runDate: CalendarDate) -> CalendarDate { runDate.adding(days: 1) }

    /// `L' = max(L, paused_until)`: the day the missed days are counted from.
    package func effectiveLastCheckIn(_ candidate: Candidate) -> CalendarDate {
        guard let paused = candidate.pausedUntil, paused > candidate.lastCheckIn else { return candidate.lastCheckIn }
        return paused
    }

    /// Whether the user is away on `runDate` (`paused_until ≥ D`).
    package func isPaused(_ candidate: Candidate, runDate: CalendarDate) -> Bool {
        candidate.pausedUntil.map { $0 >= runDate } ?? false
    }

    /// The other account that shows the user is alive on a newer account: same cleaned name, and a
    /// check-in after `since` (the user's `L'`) — or on `since` itself by an account with a greater
    /// id, so that two accounts that went silent the same day alert once, not twice. The latest
    /// such account; nil when none (or when `supersede` is off).
    package func newerAccount(of candidate: Candidate, name: DisplayName, since: CalendarDate) -> OtherAccount? {
        guard supersede else { return nil }
        return candidate.sameContact.filter { other in
            guard other.userID != candidate.userID, let last = other.lastCheckIn,
                  last > since || (last == since && other.userID > candidate.userID),
                  let otherName = try? DisplayName(cleaning: other.rawName ?? "") else { return false }
            return otherName == name
        }.max { ($0.lastCheckIn!, $0.userID) < ($1.lastCheckIn!, $1.userID) }
    }

    /// `m` for a user whose latest check-in before `runDate` is `lastCheckIn`.
    package func missedDays(lastCheckIn: CalendarDate, runDate: CalendarDate) -> Int {
        runDate.days(since: lastCheckIn) - 1
    }

    /// The latest check-in date that still makes a user reach the threshold on `runDate`
    /// (`L ≤ D − threshold − 1`); the batch query selects users at or below it.
    package func latestQualifyingCheckIn(runDate: CalendarDate) -> CalendarDate {
        runDate.adding(days: -thresholdDays - 1)
    }

    /// The oldest check-in date still due on `runDate` (`m = threshold + catchUp`); users whose
    /// latest check-in is older are stale.
    package func oldestDueCheckIn(runDate: CalendarDate) -> CalendarDate {
        runDate.adding(days: -(thresholdDays + catchUpDays) - 1)
    }

    /// Whether `m` missed days reached the threshold (the report lists the user).
    package func reachesThreshold(missedDays m: Int) -> Bool { m >= thresholdDays }

    /// Whether `m` missed days is within the window in which the alert is (still) sent.
    package func isDue(missedDays m: Int) -> Bool {
        reachesThreshold(missedDays: m) && m <= thresholdDays + catchUpDays
    }

    /// The decision for `candidate` on `runDate`, together with the cleaned recipient data when it
    /// is `.send`. Returns nil when the candidate is below the threshold (never listed).
    ///
    /// In order: away (`paused`, with `m` counted from `L` — the days since the last check-in);
    /// then, counting from `L'`, below the threshold (nil), `stale`, `already_notified`,
    /// `invalid_email`, `invalid_name`, `superseded`, `send`.
    package func evaluate(_ candidate: Candidate, runDate: CalendarDate) -> Evaluation? {
        if isPaused(candidate, runDate: runDate) {
            let m = missedDays(lastCheckIn: candidate.lastCheckIn, runDate: runDate)
            guard reachesThreshold(missedDays: m) else { return nil }
            return Evaluation(missedDays: m, decision: .paused, reason: "paused until \(candidate.pausedUntil!)")
        }
        let since = effectiveLastCheckIn(candidate)
        let m = missedDays(lastCheckIn: since, runDate: runDate)
        guard reachesThreshold(missedDays: m) else { return nil }
        let evaluation = decide(candidate, missedDays: m, since: since)
        return evaluation.with(effectiveLastCheckIn: since, supersededBy: evaluation.supersededBy)
    }

    /// `contacts` split into the valid addresses (in order, each address once) and the invalid ones.
    package static func validate(_ contacts: [Candidate.RawContact]) -> (valid: [Evaluation.Contact], invalid: [Evaluation.InvalidContact]) {
        var valid: [Evaluation.Contact] = []
        var invalid: [Evaluation.InvalidContact] = []
        for contact in contacts {
            do {
                let address = try EmailAddress(validating: contact.email ?? "")
                if !valid.contains(where: { $0.address.address.lowercased() == address.address.lowercased() }) {
                    valid.append(Evaluation.Contact(address: address, position: contact.position, tier: contact.tier, language: contact.language))
                }
            } catch {
                invalid.append(Evaluation.InvalidContact(raw: contact.email ?? "", position: contact.position, reason: error.reason))
            }
        }
        return (valid, invalid)
    }

    /// The valid contacts split into those the first alert goes to and those held back for the
    /// escalation: the second tier waits while there is an escalation to wait for and at least one
    /// valid first-tier contact to tell now — a user whose contacts are all of the second tier
    /// (or whose first-tier addresses are all unusable) has them alerted at once, since nobody
    /// else would be told.
    package func firstAlerted(_ contacts: [Evaluation.Contact]) -> (now: [Evaluation.Contact], waiting: [Evaluation.Contact]) {
        let first = contacts.filter { $0.tier != 2 }
        guard secondTierWaits, !first.isEmpty else { return (contacts, []) }
        return (first, contacts.filter { $0.tier == 2 })
    }

    /// The decision once `m` (counted from `since = L'`) reached the threshold.
    private func decide(_ candidate: Candidate, missedDays m: Int, since: CalendarDate) -> Evaluation {
        if !isDue(missedDays: m) { return Evaluation(missedDays: m, decision: .stale) }
        if candidate.notifiedInStreak { return Evaluation(missedDays: m, decision: .alreadyNotified) }
        let (valid, invalid) = Self.validate(candidate.contactsInForce)
        let (contacts, waiting) = firstAlerted(valid)
        guard !contacts.isEmpty else {
            let reason = invalid.count == 1 ? "emergency email: \(invalid[0].reason)"
                : "no valid emergency email: " + invalid.map { "#\($0.position): \($0.reason)" }.joined(separator: "; ")
            return Evaluation(missedDays: m, decision: .invalidEmail, reason: reason, invalidContacts: invalid)
        }
        let name: DisplayName
        do { name = try DisplayName(cleaning: candidate.rawName ?? "") } catch {
            return Evaluation(missedDays: m, decision: .invalidName, reason: "name is empty after cleaning",
                              contacts: contacts, invalidContacts: invalid).holding(waiting)
        }
        if let newer = newerAccount(of: candidate, name: name, since: since) {
            return Evaluation(missedDays: m, decision: .superseded, reason: Self.supersededReason(newer), contacts: contacts,
                              invalidContacts: invalid, name: name)
                .with(effectiveLastCheckIn: since, supersededBy: newer).holding(waiting)
        }
        return Evaluation(missedDays: m, decision: .send, contacts: contacts, invalidContacts: invalid, name: name).holding(waiting)
    }

    /// The recorded reason of a `superseded` user: it starts with `superseded:` and names the newer account.
    package static func supersededReason(_ newer: OtherAccount) -> String {
        "superseded: newer account \(newer.userID) (same contact and name) checked in on \(newer.lastCheckIn?.description ?? "?")"
    }

    /// The alerts of a `.send` evaluation, one per valid contact it goes to now (none for any other
    /// decision; the second tier held back is alerted by the escalation).
    package func jobs(for candidate: Candidate, _ evaluation: Evaluation) -> [DeliveryJob] {
        guard evaluation.decision == .send, let name = evaluation.name else { return [] }
        let since = evaluation.effectiveLastCheckIn ?? candidate.lastCheckIn
        return evaluation.contacts.map {
            var job = DeliveryJob(kind: .alert, userID: candidate.userID, name: name, email: $0.address, position: $0.position,
                                  missedDays: evaluation.missedDays, lastCheckIn: candidate.lastCheckIn,
                                  pausedUntil: since > candidate.lastCheckIn ? since : nil)
            job.languages = .init(contact: $0.language, user: candidate.language)
            return job
        }
    }
}
