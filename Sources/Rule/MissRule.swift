import Values

/// The alert rule of docs/rule.md, as a pure function of dates and stored facts.
///
/// With run date `D` and `L` the latest check-in before `D`, the consecutive missed days are
/// `m = (D − L) − 1`. A user is due when `threshold ≤ m ≤ threshold + catchUp`; beyond that the
/// user is stale. A check-in on `D` or later, or no check-in at all, means no mail (the batch query
/// leaves those users out). Once a mail of the streak was accepted, no other mail follows.
public struct MissRule: Sendable, Equatable {
    /// `MISS_THRESHOLD_DAYS`: missed days that trigger the alert (default 2).
    public let thresholdDays: Int
    /// `CATCH_UP_DAYS`: how many more days a missed alert is still sent (default 7).
    public let catchUpDays: Int

    /// Creates the rule.
    public init(thresholdDays: Int, catchUpDays: Int) {
        self.thresholdDays = thresholdDays
        self.catchUpDays = catchUpDays
    }

    /// `m` for a user whose latest check-in before `runDate` is `lastCheckIn`.
    public func missedDays(lastCheckIn: CalendarDate, runDate: CalendarDate) -> Int {
        runDate.days(since: lastCheckIn) - 1
    }

    /// The latest check-in date that still makes a user reach the threshold on `runDate`
    /// (`L ≤ D − threshold − 1`); the batch query selects users at or below it.
    public func latestQualifyingCheckIn(runDate: CalendarDate) -> CalendarDate {
        runDate.adding(days: -thresholdDays - 1)
    }

    /// The oldest check-in date still due on `runDate` (`m = threshold + catchUp`); users whose
    /// latest check-in is older are stale.
    public func oldestDueCheckIn(runDate: CalendarDate) -> CalendarDate {
        runDate.adding(days: -(thresholdDays + catchUpDays) - 1)
    }

    /// Whether `m` missed days reached the threshold (the report lists the user).
    public func reachesThreshold(missedDays m: Int) -> Bool { m >= thresholdDays }

    /// Whether `m` missed days is within the window in which the alert is (still) sent.
    public func isDue(missedDays m: Int) -> Bool {
        reachesThreshold(missedDays: m) && m <= thresholdDays + catchUpDays
    }

    /// The decision for `candidate` on `runDate`, together with the cleaned recipient data when it
    /// is `.send`. Returns nil when the candidate is below the threshold (never listed).
    public func evaluate(_ candidate: Candidate, runDate: CalendarDate) -> Evaluation? {
        let m = missedDays(lastCheckIn: candidate.lastCheckIn, runDate: runDate)
        guard reachesThreshold(missedDays: m) else { return nil }
        if !isDue(missedDays: m) { return Evaluation(missedDays: m, decision: .stale) }
        if candidate.notifiedInStreak { return Evaluation(missedDays: m, decision: .alreadyNotified) }
        let email: EmailAddress
        do { email = try EmailAddress(validating: candidate.rawEmail ?? "") } catch {
            return Evaluation(missedDays: m, decision: .invalidEmail, reason: "emergency email: \(error.reason)")
        }
        let name: DisplayName
        do { name = try DisplayName(cleaning: candidate.rawName ?? "") } catch {
            return Evaluation(missedDays: m, decision: .invalidName, reason: "name is empty after cleaning", email: email)
        }
        return Evaluation(missedDays: m, decision: .send, email: email, name: name)
    }
}
