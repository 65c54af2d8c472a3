import Foundation
import Rule
import Store
import Values

/// The aggregates of a period, computed in SQL (GROUP BY) before any row is listed: one entry per
/// day, per day and skip reason, and per value of `m`. Its size is bounded by the number of days,
/// never by the number of rows, so a year at a million users fits in a few kilobytes.
package struct HistoryOverview: Sendable, Equatable {
    /// Every day of the period in order, with zero counts for days without rows.
    package var days: [DayCounts]
    /// Skipped users per day and reason, by day, then most frequent first.
    package var skips: [SkipCount]
    /// The distribution of `m` over the period's rows, by `m`.
    package var missDays: [MissDaysCount]
    /// The period's messages by kind (`alert`, `all_clear`, `follow_up`, `introduction`,
    /// `reminder`) and channel (`email`, `webhook`): sent, failed for good, and still to retry.
    package var byKind: [KindCount] = []
    /// The same totals per channel (`kind` empty).
    package var byChannel: [KindCount] = []
    /// Contacts the mail server refused as unknown ("no such user") and not accepted since
    /// (`contact_status`), for the operator to ask the user to fix — of the period's users.
    package var undeliverable: [UndeliverableContact] = []
    /// The period's intake gaps (docs/intake-hold.md): days on which far fewer users checked in
    /// than on the days before, and the users whose alerts were held over each.
    package var intakeGaps: [IntakeGap] = []

    /// One intake gap.
    package struct IntakeGap: Sendable, Equatable {
        /// The day.
        package var date: CalendarDate
        /// Users with a check-in dated that day (as received so far: late check-ins included).
        package var intake: Int
        /// The median intake of the 14 days before it.
        package var median: Double
        /// Users whose alert was held over it.
        package var held: Int

        /// `median` as the reports print it: whole, or with one decimal (the mean of two middle days).
        package static func number(_ median: Double) -> String {
            median == median.rounded() ? String(Int(median)) : String(format: "%.1f", median)
        }

        /// `2026-01-11: 0 check-ins (usually 200), 200 alerts held`.
        package var described: String {
            "\(date): \(intake) check-ins (usually \(Self.number(median))), \(held) user(s)' alerts held"
        }
    }
    /// The bounce reports read in the period (docs/bounces.md), per day they were read (in the
    /// service zone) and per recipient domain (most first, at most 100), by what they were.
    package var bouncesByDay: [BounceCount] = []
    /// See `bouncesByDay`.
    package var bouncesByDomain: [BounceCount] = []
    /// The canaries sent in the period, per relay (docs/operating.md, "The canary"): sent, back,
    /// lost, their latency's median and longest. Empty when none was sent (the canary off).
    package var canaries: [CanaryStore.Figures] = []

    /// The bounce reports of one day or one recipient domain, by kind (`bounce_events.kind`), and
    /// the permanent ones by what they said of the address (`BounceClass`).
    package struct BounceCount: Sendable, Equatable {
        /// The day (`2026-01-13`) or the domain ('' when the report named none).
        package var key: String
        /// Permanent failures: their mails `bounced` (the contact undeliverable only for `noSuchAddress`).
        package var permanent = 0
        /// `permanent` by class; a class with no report is absent.
        package var permanentByClass: [BounceClass: Int] = [:]
        /// Delays, and failures given up on with `4.x.x`: noted.
        package var transient = 0
        /// RFC 5965 complaints.
        package var complaint = 0
        /// Reports that named no mail of ours (kept aside).
        package var unmatched = 0

        /// Creates the value.
        package init(key: String, permanent: Int = 0, transient: Int = 0, complaint: Int = 0, unmatched: Int = 0,
                     permanentByClass: [BounceClass: Int] = [:]) {
            self.key = key
            self.permanent = permanent
            self.permanentByClass = permanentByClass
            self.transient = transient
            self.complaint = complaint
            self.unmatched = unmatched
        }

        /// Every report counted.
        package var total: Int { permanent + transient + complaint + unmatched }

        /// `permanentByClass` for every class, in `BounceClass`'s order (zeros included): the
        /// columns of the CSV, JSON and HTML reports.
        package var classColumns: [(bounceClass: BounceClass, count: Int)] {
            BounceClass.allCases.map { ($0, permanentByClass[$0] ?? 0) }
        }

        /// Adds `count` reports of `kind` — of `bounceClass` when permanent (an unknown kind is
        /// not counted rather than guessed).
        mutating func add(kind: String, bounceClass: BounceClass?, _ count: Int) {
            switch kind {
            case "permanent":
                permanent += count
                permanentByClass[bounceClass ?? .other, default: 0] += count
            case "transient": transient += count
            case "complaint": complaint += count
            case "unmatched": unmatched += count
            default: break
            }
        }

        /// `1 permanent, 0 transient, 0 complaints, 2 unmatched`.
        package var described: String {
            "\(permanent) permanent, \(transient) transient, \(complaint) complaint\(complaint == 1 ? "" : "s"), \(unmatched) unmatched"
        }

        /// The permanent reports' classes that occur, `1 no_such_address, 2 policy`; nil when none.
        package var classesDescribed: String? {
            let classes = classColumns.filter { $0.count > 0 }.map { "\($0.count) \($0.bounceClass.rawValue)" }
            return classes.isEmpty ? nil : classes.joined(separator: ", ")
        }
    }

    /// How many times a contact said "I'm on it" (docs/acknowledgement.md) for a streak whose alert is dated in
    /// the period: the rows of `sileme.acknowledgements`.
    package var acknowledgements = 0

    /// Escalation per alert date (docs/escalation.md): every day of the period, in order.
    package var escalation: [EscalationDay] = []

    /// Escalation over the whole period.
    package var escalationTotals: EscalationDay { EscalationDay.totals(escalation) }

    /// One kind's messages on one channel in the period.
    package struct KindCount: Sendable, Equatable {
        /// `notification_logs.kind`.
        package var kind: String
        /// `notification_logs.channel`.
        package var channel: String = "email"
        /// Accepted (and not bounced since).
        package var sent: Int
        /// Refused for good.
        package var failed: Int
        /// Waiting for a retry, or in flight.
        package var pending: Int
        /// Accepted, then reported dead by a bounce (docs/bounces.md).
        package var bounced = 0

        /// `alert`, or `alert (webhook)` for another channel's (`DeliveryJob.Channel.label`).
        package var label: String { DeliveryJob.Channel(rawValue: channel)?.label(kind) ?? "\(kind) (\(channel))" }
    }

    /// One undeliverable contact.
    package struct UndeliverableContact: Sendable, Equatable {
        /// `users.id`.
        package var userID: String
        /// The address (masked unless the report shows them in full).
        package var email: String
        /// The server's reply (addresses masked likewise).
        package var lastReply: String
        /// When it was marked.
        package var since: Date
    }

    /// Creates an overview.
    package init(days: [DayCounts], skips: [SkipCount], missDays: [MissDaysCount]) {
        self.days = days
        self.skips = skips
        self.missDays = missDays
    }

    /// The sum over all days (dated on the first day).
    package var totals: DayCounts {
        var sum = DayCounts(date: days.first?.date ?? CalendarDate(dayNumber: 0))
        for day in days { sum.add(day) }
        return sum
    }

    /// Days on which no run was recorded.
    package var daysWithoutRun: Int { days.filter { $0.runs == 0 }.count }

    /// The counts of `date`, when it is in the period.
    package func counts(on date: CalendarDate) -> DayCounts? {
        guard let first = days.first else { return nil }
        let index = date.days(since: first.date)
        return days.indices.contains(index) ? days[index] : nil
    }
}

extension HistoryOverview {
    /// `6 sent, 5 back, 1 lost; latency p50 12.0 s, max 40.5 s` (no latency when none came back).
    static func described(_ canaries: CanaryStore.Figures) -> String {
        let latency = canaries.latencyMedian.map { median in
            String(format: "; latency p50 %.1f s, max %.1f s", median, canaries.latencyMax ?? median)
        } ?? ""
        return "\(canaries.sent) sent, \(canaries.back) back, \(canaries.lost) lost" + latency
    }
}
