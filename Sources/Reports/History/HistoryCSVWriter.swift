import Foundation
import Output
import Values

/// The history report as one CSV table (RFC 4180, UTF-8 with a byte-order mark so that
/// spreadsheets read Chinese names), one line per record; the first column says what the line is
/// and only that record's columns are filled:
///
/// - `day`: `date`, `runs`, the counts (`sent` … `legacy_not_sent`)
/// - `skipped`: `date`, `skipped` (users), `reason`
/// - `run`: `date` (run date), `run_id` … `run_status`, `due`, `sent`, `failed`, `skipped`, `reason` (error)
/// - `notification` (failed/retry/sending rows of a day, or every row of the user): `date`,
///   `status`, `user_id` … `claimed_at`, `reason` (reply or error)
/// - `user`: `user_id`, `name`, `contact_email`
/// - `streak`: `last_check_in_date`, `next_check_in_date`, `missed_days`, `outcome`, `date` (day of
///   the mail), `consecutive_miss_days` (its `m`), `sent_at`, `message_id`, `status` (latest row
///   when not sent), `reason`
/// - `miss_days`: `consecutive_miss_days`, `sent`, `not_sent`
/// - `intake_gap`: `date`, `reason` (its intake and the usual), `held` (users held over it)
/// - `bounces_day` (`date`) and `bounces_domain` (`domain`): the bounce reports read, `permanent`,
///   `transient`, `complaint`, `unmatched`, and the permanent ones by class (docs/bounces.md):
///   `permanent_no_such_address`, `permanent_mailbox`, `permanent_system`, `permanent_routing`,
///   `permanent_protocol`, `permanent_policy`, `permanent_other`
///
/// - `escalation_day` (`date`: the alert date) and `escalation_total` (the period), when any streak
///   was alerted: the streaks
///   `alerted` and `acknowledged`, the seconds from the first alert to the first acknowledgement
///   (`ack_median_seconds`, `ack_p90_seconds`; empty when none was acknowledged), `escalated`,
///   `unheard`, `outcome_ok`, `outcome_unreachable`
///
/// Values starting with `= + - @` are prefixed with `'` so that no value runs as a formula.
package final class HistoryCSVWriter: HistorySink {
    private let output: TextOutput
    private var time = HistoryTime(zone: TimeZone(identifier: "UTC")!)
    private var overview: HistoryOverview!
    private var perUser = false

    /// The columns, in order.
    package static let columns = [
        "record", "date", "runs", "sent", "failed", "retry_pending", "sending", "skipped", "legacy_sent",
        "legacy_not_sent", "not_sent", "run_id", "mode", "host", "started_at", "finished_at", "duration_seconds",
        "run_status", "due", "user_id", "name", "status", "email_sent", "recipient", "contact_email",
        "consecutive_miss_days", "last_check_in_date", "next_check_in_date", "missed_days", "outcome", "attempts",
        "message_id", "sent_at", "next_attempt_at", "claimed_at", "reason", "superseded", "paused", "cancelled",
        "future_ignored", "held", "bounced", "domain", "permanent", "transient", "complaint", "unmatched",
        "alerted", "acknowledged", "ack_median_seconds", "ack_p90_seconds", "escalated", "unheard", "outcome_ok",
        "outcome_unreachable",
    ] + BounceClass.allCases.map { "permanent_\($0.rawValue)" }
    private static let index = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0) })

    /// Writes to `output`.
    package init(output: TextOutput) { self.output = output }

    package func begin(_ header: HistoryHeader, overview: HistoryOverview) throws {
        time = HistoryTime(zone: header.timeZone)
        self.overview = overview
        perUser = header.user != nil
        output.write("\u{FEFF}" + Self.columns.joined(separator: ",") + "\r\n")
        if let user = header.user {
            line(["record": "user", "user_id": user.userID, "name": user.name, "contact_email": user.contactEmail])
            return
        }
        for day in overview.days {
            line(["record": "day", "date": HistoryTime.day(day.date), "runs": String(day.runs), "sent": String(day.sent),
                  "failed": String(day.failed), "retry_pending": String(day.retryPending), "sending": String(day.sending),
                  "skipped": String(day.skipped), "legacy_sent": String(day.legacySent),
                  "legacy_not_sent": String(day.legacyNotSent), "bounced": String(day.bounced)])
        }
        for skip in overview.skips {
            line(["record": "skipped", "date": HistoryTime.day(skip.date), "skipped": String(skip.count), "reason": skip.reason])
        }
        for contact in overview.undeliverable {
            line(["record": "undeliverable_contact", "user_id": contact.userID, "contact_email": contact.email,
                  "reason": contact.lastReply])
        }
        for (record, counts) in [("bounces_day", overview.bouncesByDay), ("bounces_domain", overview.bouncesByDomain)] {
            for count in counts {
                line([("record", record), (record == "bounces_day" ? "date" : "domain", count.key),
                      ("permanent", String(count.permanent)), ("transient", String(count.transient)),
                      ("complaint", String(count.complaint)), ("unmatched", String(count.unmatched))]
                     + count.classColumns.map { ("permanent_\($0.bounceClass.rawValue)", String($0.count)) })
            }
        }
        for day in overview.escalation where !day.isEmpty {
            escalation("escalation_day", day)
        }
        if !overview.escalationTotals.isEmpty { escalation("escalation_total", overview.escalationTotals) }
        for gap in overview.intakeGaps {
            line(["record": "intake_gap", "date": HistoryTime.day(gap.date), "reason": "intake \(gap.intake) of a usual \(HistoryOverview.IntakeGap.number(gap.median))",
                  "held": String(gap.held)])
        }
    }

    package func beginSection(_ section: HistorySection) throws {}

    package func run(_ run: RunRecord) throws {
        let skipped = (run.invalidEmail ?? 0) + (run.invalidName ?? 0)
        line(["record": "run", "date": HistoryTime.day(run.runDate), "run_id": String(run.id), "mode": run.mode,
              "host": run.host, "started_at": run.startedAt.map(time.iso) ?? "",
              "finished_at": run.finishedAt.map(time.iso) ?? "",
              "duration_seconds": run.durationSeconds.map { String(format: "%.3f", $0) } ?? "",
              "run_status": run.status, "due": run.due.map(String.init) ?? "", "sent": run.sent.map(String.init) ?? "",
              "failed": run.failed.map(String.init) ?? "", "skipped": run.invalidEmail == nil ? "" : String(skipped),
              "reason": run.error ?? "", "superseded": run.counts["superseded"].map(String.init) ?? "",
              "paused": run.counts["paused"].map(String.init) ?? "", "cancelled": run.counts["cancelled"].map(String.init) ?? "",
              "future_ignored": run.counts["future_ignored"].map(String.init) ?? "", "held": run.counts["held"].map(String.init) ?? ""])
    }

    package func notification(_ record: NotificationRecord) throws {
        line(["record": "notification", "date": HistoryTime.day(record.date), "status": record.status ?? "",
              "email_sent": String(record.emailSent), "user_id": record.userID, "name": record.name ?? "",
              "recipient": record.recipient ?? "", "contact_email": record.contactEmail ?? "",
              "consecutive_miss_days": String(record.missedDays),
              "last_check_in_date": record.lastCheckIn.map(HistoryTime.day) ?? "", "attempts": String(record.attempts),
              "message_id": record.messageID ?? "", "sent_at": record.sentAt.map(time.iso) ?? "",
              "next_attempt_at": record.nextAttemptAt.map(time.iso) ?? "",
              "claimed_at": record.claimedAt.map(time.iso) ?? "", "reason": record.detail ?? ""])
    }

    package func streak(_ streak: Streak) throws {
        line(["record": "streak", "last_check_in_date": HistoryTime.day(streak.lastCheckIn),
              "next_check_in_date": streak.nextCheckIn.map(HistoryTime.day) ?? "", "missed_days": String(streak.missedDays),
              "outcome": streak.outcome.rawValue, "date": streak.notifiedOn.map(HistoryTime.day) ?? "",
              "consecutive_miss_days": streak.notifiedMissedDays.map(String.init) ?? "",
              "sent_at": streak.sentAt.map(time.iso) ?? "", "message_id": streak.messageID ?? "",
              "status": streak.lastStatus ?? "", "reason": streak.lastError ?? ""])
    }

    package func endSection(_ section: HistorySection) throws {}

    package func end() throws {
        for bucket in overview.missDays {
            line(["record": "miss_days", "consecutive_miss_days": String(bucket.missedDays), "sent": String(bucket.sent),
                  "not_sent": String(bucket.notSent)])
        }
        output.flush()
    }

    /// One `escalation_day` (dated) or `escalation_total` line.
    private func escalation(_ record: String, _ day: EscalationDay) {
        let time = day.timeToAcknowledgement
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "" }
        line(["record": record, "date": record == "escalation_day" ? HistoryTime.day(day.date) : "",
              "alerted": String(day.alerted), "acknowledged": String(day.acknowledged),
              "ack_median_seconds": seconds(time?.median), "ack_p90_seconds": seconds(time?.p90),
              "escalated": String(day.escalated), "unheard": String(day.unheard), "outcome_ok": String(day.outcomeOK),
              "outcome_unreachable": String(day.outcomeUnreachable)])
    }

    private func line(_ values: KeyValuePairs<String, String>) { line(values.map { ($0.key, $0.value) }) }

    /// One line of `values` (column, value), the other columns empty.
    private func line(_ values: [(String, String)]) {
        var fields = [String](repeating: "", count: Self.columns.count)
        for (key, value) in values { fields[Self.index[key]!] = Escaping.csv(value) }
        output.write(fields.joined(separator: ",") + "\r\n")
    }
}
