import Foundation
import Store
import Output

/// The history report as one JSON object, streamed: the header fields, `summary`, `days` (per-day
/// report) or `user` (per-user report), `miss_days`, then the listed sections (`runs` and
/// `problems`, or `streaks` and `notifications`) as arrays. Times are ISO 8601 in the service
/// zone; a missing value is `null`.
package final class HistoryJSONWriter: HistorySink {
    private let output: TextOutput
    private var time = HistoryTime(zone: TimeZone(identifier: "UTC")!)
    private var first = true

    /// Writes to `output`.
    package init(output: TextOutput) { self.output = output }

    package func begin(_ header: HistoryHeader, overview: HistoryOverview) throws {
        time = HistoryTime(zone: header.timeZone)
        let request = header.request
        let totals = overview.totals
        var head: [(String, String)] = [
            ("report", Self.string(header.user == nil ? "history" : "user_history")),
            ("from", Self.string(request.from.description)), ("to", Self.string(request.to.description)),
            ("time_zone", Self.string(header.timeZone.identifier)),
            ("threshold_days", String(header.thresholdDays)), ("catch_up_days", String(header.catchUpDays)),
            ("full_emails", String(request.fullEmails)), ("generated_at", Self.string(time.iso(header.generatedAt))),
        ]
        if let user = header.user {
            head.append(("user", Self.object([("user_id", Self.string(user.userID)), ("name", Self.string(user.name)),
                                              ("contact_email", Self.string(user.contactEmail))])))
        }
        var summary = [("days", String(overview.days.count))]
        if header.user == nil {
            summary += [("days_without_run", String(overview.daysWithoutRun)), ("runs", String(totals.runs))]
        }
        head.append(("summary", Self.object(summary + Self.counts(totals))))
        if header.user == nil {
            let days = overview.days.map { day in
                let reasons = overview.skips.filter { $0.date == day.date }.map {
                    Self.object([("reason", Self.string($0.reason)), ("count", String($0.count))])
                }
                return Self.object([("date", Self.string(HistoryTime.day(day.date))), ("runs", String(day.runs)),
                                    ("completed_runs", String(day.completedRuns)), ("failed_runs", String(day.failedRuns)),
                                    ("running_runs", String(day.runningRuns))]
                                   + Self.counts(day) + [("skipped_by_reason", "[" + reasons.joined(separator: ",") + "]")])
            }
            head.append(("days", "[\n" + days.joined(separator: ",\n") + "\n]"))
        }
        let missDays = overview.missDays.map {
            Self.object([("m", String($0.missedDays)), ("count", String($0.count)), ("sent", String($0.sent)),
                         ("not_sent", String($0.notSent))])
        }
        head.append(("miss_days", "[" + missDays.joined(separator: ",") + "]"))
        head.append(("by_kind", "[" + overview.byKind.map {
            Self.object([("kind", Self.string($0.kind)), ("channel", Self.string($0.channel)), ("sent", String($0.sent)),
                         ("failed", String($0.failed)), ("pending", String($0.pending)), ("bounced", String($0.bounced))])
        }.joined(separator: ",") + "]"))
        head.append(("by_channel", "[" + overview.byChannel.map {
            Self.object([("channel", Self.string($0.channel)), ("sent", String($0.sent)), ("failed", String($0.failed)),
                         ("pending", String($0.pending))])
        }.joined(separator: ",") + "]"))
        head.append(("acknowledgements", String(overview.acknowledgements)))
        head.append(("escalation", Self.object([("days", "[" + overview.escalation.map { Self.escalation($0, dated: true) }.joined(separator: ",") + "]"),
                                                ("totals", Self.escalation(overview.escalationTotals, dated: false))])))
        func bounces(_ counts: [HistoryOverview.BounceCount], key: String) -> String {
            "[" + counts.map {
                Self.object([(key, Self.string($0.key)), ("permanent", String($0.permanent)),
                             ("permanent_by_class", Self.object($0.classColumns.map { ($0.bounceClass.rawValue, String($0.count)) })),
                             ("transient", String($0.transient)), ("complaint", String($0.complaint)), ("unmatched", String($0.unmatched))])
            }.joined(separator: ",") + "]"
        }
        head.append(("bounces", Self.object([("by_day", bounces(overview.bouncesByDay, key: "date")),
                                             ("by_domain", bounces(overview.bouncesByDomain, key: "domain"))])))
        head.append(("canaries", "[" + overview.canaries.map { relay in
            Self.object([("relay", Self.string(relay.relay)), ("sent", String(relay.sent)), ("back", String(relay.back)), ("lost", String(relay.lost)),
                         ("latency_p50_seconds", relay.latencyMedian.map { String($0) } ?? "null"),
                         ("latency_max_seconds", relay.latencyMax.map { String($0) } ?? "null")])
        }.joined(separator: ",") + "]"))
        head.append(("undeliverable_contacts", "[" + overview.undeliverable.map {
            Self.object([("user_id", Self.string($0.userID)), ("email", Self.string($0.email)),
                         ("last_reply", Self.string($0.lastReply)), ("since", Self.string(time.iso($0.since)))])
        }.joined(separator: ",") + "]"))
        head.append(("intake_gaps", "[" + overview.intakeGaps.map {
            Self.object([("date", Self.string($0.date.description)), ("intake", String($0.intake)),
                         ("median", HistoryOverview.IntakeGap.number($0.median)), ("held", String($0.held))])
        }.joined(separator: ",") + "]"))
        output.write("{" + head.map { "\(Self.string($0.0)):\($0.1)" }.joined(separator: ",\n"))
    }

    package func beginSection(_ section: HistorySection) throws {
        output.write(",\n\(Self.string(section.rawValue)):[")
        first = true
    }

    package func run(_ run: RunRecord) throws {
        element(Self.object([
            ("id", String(run.id)), ("run_date", Self.string(HistoryTime.day(run.runDate))), ("mode", Self.string(run.mode)),
            ("host", Self.string(run.host)), ("started_at", optional(run.startedAt.map(time.iso))),
            ("finished_at", optional(run.finishedAt.map(time.iso))),
            ("duration_seconds", run.durationSeconds.map { String(format: "%.3f", $0) } ?? "null"),
            ("status", Self.string(run.status)),
        ] + RunRecord.listedFields.map { ($0.name, Self.number(run.counts[$0.name])) } + [
            ("error", optional(run.error)),
        ]))
    }

    package func notification(_ record: NotificationRecord) throws {
        element(Self.object([
            ("date", Self.string(HistoryTime.day(record.date))), ("status", optional(record.status)),
            ("display_status", Self.string(record.displayStatus)), ("email_sent", String(record.emailSent)),
            ("user_id", Self.string(record.userID)), ("name", optional(record.name)),
            ("recipient", optional(record.recipient)), ("contact_email", optional(record.contactEmail)),
            ("consecutive_miss_days", String(record.missedDays)),
            ("last_check_in_date", optional(record.lastCheckIn.map(HistoryTime.day))), ("attempts", String(record.attempts)),
            ("message_id", optional(record.messageID)), ("sent_at", optional(record.sentAt.map(time.iso))),
            ("next_attempt_at", optional(record.nextAttemptAt.map(time.iso))),
            ("claimed_at", optional(record.claimedAt.map(time.iso))), ("claimed_by", optional(record.claimedBy)),
            ("claim_alive", String(record.claimAlive)), ("detail", optional(record.detail)),
        ]))
    }

    package func streak(_ streak: Streak) throws {
        element(Self.object([
            ("last_check_in_date", Self.string(HistoryTime.day(streak.lastCheckIn))),
            ("next_check_in_date", optional(streak.nextCheckIn.map(HistoryTime.day))), ("missed_days", String(streak.missedDays)),
            ("outcome", Self.string(streak.outcome.rawValue)), ("notified_on", optional(streak.notifiedOn.map(HistoryTime.day))),
            ("sent_at", optional(streak.sentAt.map(time.iso))),
            ("notified_miss_days", Self.number(streak.notifiedMissedDays)), ("message_id", optional(streak.messageID)),
            ("rows", String(streak.rows)), ("last_status", optional(streak.lastStatus)),
            ("last_error", optional(streak.lastError)),
        ]))
    }

    package func endSection(_ section: HistorySection) throws {
        output.write(first ? "]" : "\n]")
    }

    package func end() throws {
        output.write("}\n")
        output.flush()
    }

    private func element(_ json: String) {
        output.write((first ? "\n" : ",\n") + json)
        first = false
    }

    private func optional(_ text: String?) -> String { text.map(Self.string) ?? "null" }

    /// The counts every day and the summary have.
    package static func counts(_ day: DayCounts) -> [(String, String)] {
        [("sent", String(day.sent)), ("failed", String(day.failed)), ("bounced", String(day.bounced)), ("retry_pending", String(day.retryPending)),
         ("sending", String(day.sending)), ("skipped", String(day.skipped)), ("legacy_sent", String(day.legacySent)),
         ("legacy_not_sent", String(day.legacyNotSent)), ("undelivered", String(day.undelivered))]
    }

    /// One day's escalation (the totals without `date`): the time to the first acknowledgement in
    /// seconds (`null` when none was acknowledged), the steps and the outcomes.
    package static func escalation(_ day: EscalationDay, dated: Bool) -> String {
        let time = day.timeToAcknowledgement
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "null" }
        return object((dated ? [("date", string(HistoryTime.day(day.date)))] : []) + [
            ("alerted", String(day.alerted)), ("acknowledged", String(day.acknowledged)),
            ("ack_median_seconds", seconds(time?.median)), ("ack_p90_seconds", seconds(time?.p90)),
            ("escalated", String(day.escalated)), ("unheard", String(day.unheard)),
            ("outcome_ok", String(day.outcomeOK)), ("outcome_unreachable", String(day.outcomeUnreachable)),
        ])
    }

    package static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    package static func number(_ value: Int?) -> String { value.map(String.init) ?? "null" }

    package static func string(_ text: String) -> String { Escaping.json(text) }
}
