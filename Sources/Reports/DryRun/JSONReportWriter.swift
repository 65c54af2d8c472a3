import Foundation
import Output
import Rule
import Store
import Values

/// The dry-run report as one JSON object (docs/interfaces.md), streamed: `run_date`, `time_zone`,
/// `threshold_days`, `catch_up_days`, `dry_run`, `users` (one object per listed user, with
/// `superseded_by`, `paused_until` and `ignored_future_check_in` where they apply, and the
/// `contacts` a `send` goes to — each with its tier — and the `second_tier_waiting` held back for
/// the escalation), `messages` (the all-clears, follow-ups, introductions and
/// unfinished alerts a run would send now, and with the webhook on its events, the new alerts'
/// included), `summary` (every decision, 0 included), `messages_summary` (mails per kind, the
/// alerts counted per contact), `webhook_summary` (webhook events per kind) and
/// `future_check_ins_ignored` (users with a check-in dated after `D + 1`).
package final class JSONReportWriter: ReportSink {
    private let output: TextOutput
    private let fullEmails: Bool
    private var first = true
    private var alerts = 0
    private var messageCounts = "{}"
    private var webhookCounts = "{}"
    private var lifecycleWritten = false

    /// Writes to `output`, masking emails unless `fullEmails`.
    package init(output: TextOutput, fullEmails: Bool) {
        self.output = output
        self.fullEmails = fullEmails
    }

    package func begin(_ header: ReportHeader) throws {
        output.write("{\"run_date\":\(Escaping.json(header.runDate.description)),\"time_zone\":\(Escaping.json(header.timeZone)),"
                     + "\"threshold_days\":\(header.thresholdDays),\"catch_up_days\":\(header.catchUpDays),"
                     + "\"dry_run\":\(header.dryRun),"
                     + (header.emptyTimeZoneUsers > 0 ? "\"empty_time_zone_users\":\(header.emptyTimeZoneUsers)," : "")
                     + "\"users\":[")
    }

    package func row(_ row: ReportRow) throws {
        // One string appended in place (a million-user dry run writes tens of thousands of rows).
        var object = first ? "\n{\"user_id\":" : ",\n{\"user_id\":"
        first = false
        object.reserveCapacity(320)
        object += Escaping.json(row.userID)
        object += ",\"name\":"
        object += Escaping.json(row.name)
        object += ",\"email\":"
        object += Escaping.json(row.displayEmail(full: fullEmails))
        object += ",\"last_check_in_date\":\""
        object += row.lastCheckIn.description
        object += "\",\"consecutive_miss_days\":"
        object += String(row.missedDays)
        object += ",\"decision\":"
        object += Escaping.json(row.decision.rawValue)
        if let runDate = row.runDate { object += ",\"run_date\":\"" + runDate.description + "\"" }
        if let zone = row.timeZone { object += ",\"time_zone\":" + Escaping.json(zone) }
        if let unknown = row.unknownTimeZone { object += ",\"unknown_time_zone\":" + Escaping.json(unknown) }
        if let fixed = row.fixedOffsetTimeZone { object += ",\"fixed_offset_time_zone\":" + Escaping.json(fixed) }
        if let time = row.unknownNotifyTime {
            object += ",\"unknown_notify_time\":" + Escaping.json(time.written) + ",\"served_at\":" + Escaping.json(time.served)
        }
        if let reason = row.reason { object += ",\"reason\":" + Escaping.json(reason) }
        if let newer = row.newerAccount { object += ",\"superseded_by\":" + Escaping.json(newer) }
        if let paused = row.pausedUntil { object += ",\"paused_until\":\"" + paused.description + "\"" }
        if let future = row.ignoredFutureCheckIn { object += ",\"ignored_future_check_in\":\"" + future.description + "\"" }
        if row.decision == .send {
            object += ",\"contacts\":" + json(row.contacts)
            if !row.waiting.isEmpty { object += ",\"second_tier_waiting\":" + json(row.waiting) }
            alerts += row.contacts.count
        }
        object += "}"
        output.write(object)
    }

    /// `[{"email","position","tier","language"},…]`, masked unless `fullEmails`; `language_fallback`
    /// says why a contact is not written to in the language its row or its user's asks for.
    private func json(_ contacts: [ReportRow.Contact]) -> String {
        "[" + contacts.map { contact in
            "{\"email\":" + Escaping.json(fullEmails ? contact.address : EmailMasking.mask(contact.address))
                + ",\"position\":" + String(contact.position) + ",\"tier\":" + String(contact.tier)
                + (contact.language.map { ",\"language\":" + Escaping.json($0.tag.identifier) } ?? "")
                + (contact.language?.fallback.map { ",\"language_fallback\":" + Escaping.json($0.description) } ?? "") + "}"
        }.joined(separator: ",") + "]"
    }

    /// The other messages: a `messages` array (kind, channel, user, contact — null on a webhook
    /// event about the user —, date, threaded alert) and their counts per kind in
    /// `messages_summary` (mail) and `webhook_summary`, every kind present.
    package func lifecycle(_ messages: LifecycleMessages) throws {
        output.write("\n],\"messages\":[")
        // Written one at a time, counted as they go: the new alerts' events are one per user.
        var perChannel: [DeliveryJob.Channel: [DeliveryJob.Kind: Int]] = [:]
        var separator = ""
        try messages.forEach { due in
            let email = due.contact.isEmpty ? "null" : Escaping.json(fullEmails ? due.contact : EmailMasking.mask(due.contact))
            var object = separator + "{\"kind\":\(Escaping.json(due.kind.rawValue)),\"channel\":\(Escaping.json(due.channel.rawValue)),"
                + "\"user_id\":\(Escaping.json(due.userID)),\"email\":\(email)"
            if let date = due.notificationDate { object += ",\"notification_date\":\(Escaping.json(date.description))" }
            if let reply = due.inReplyTo { object += ",\"in_reply_to\":\(Escaping.json("<\(reply)>"))" }
            output.write(object + "}")
            separator = ",\n"
            perChannel[due.channel, default: [:]][due.kind, default: 0] += 1
        }
        func counts(_ channel: DeliveryJob.Channel, plus alerts: Int) -> String {
            var perKind = perChannel[channel] ?? [:]
            perKind[.alert, default: 0] += alerts
            return "{" + DeliveryJob.Kind.allCases.map { "\(Escaping.json($0.rawValue)):\(perKind[$0] ?? 0)" }.joined(separator: ",") + "}"
        }
        messageCounts = counts(.email, plus: alerts)
        webhookCounts = counts(.webhook, plus: 0)
        lifecycleWritten = true
    }

    package func end(_ counts: RunTally) throws {
        // Every decision has its count, 0 included: a program reading the summary never meets a missing key.
        let summary = Decision.allCases.map { "\(Escaping.json($0.rawValue)):\(counts.decisionCount($0))" }.joined(separator: ",")
        if !lifecycleWritten { try lifecycle(LifecycleMessages()) }
        output.write("\n],\"summary\":{\(summary)},\"messages_summary\":\(messageCounts),\"webhook_summary\":\(webhookCounts),"
                     + "\"future_check_ins_ignored\":\(counts.futureIgnored)}\n")
        output.flush()
    }
}
