import Values
import Output

/// The `retry --dry-run` listing as a table (100 columns) or one JSON object.
package enum RetryPlanFormat {
    /// `USER  STATUS  ATTEMPTS  NOW  LAST ERROR` lines and a total.
    package static func table(_ plan: RetryPlan, runDate: CalendarDate) -> String {
        var text = "Retry for \(runDate): \(plan.usersToSend.count) of \(plan.entries.count) failed or stuck would be sent again\n"
        text += "USER      KIND          STATUS   TRIES  NOW               LAST ERROR\n"
        for entry in plan.entries {
            let now = entry.now
            let error = Printable.text(entry.target.lastError ?? "")
            text += DisplayWidth.pad(String(entry.target.userID.prefix(8)), to: 8) + "  "
                + DisplayWidth.pad(entry.target.channel == "webhook" ? "\(entry.target.kind)/wh" : entry.target.kind, to: 12) + "  "
                + DisplayWidth.pad(entry.target.status, to: 7) + "  "
                + DisplayWidth.pad(String(entry.target.attempts), to: 5) + "  "
                + DisplayWidth.pad(now, to: 16) + "  "
                + DisplayWidth.truncate(error, to: 100 - 8 - 12 - 7 - 5 - 16 - 10) + "\n"
        }
        return text
    }

    /// `{"run_date":…, "retry":[{"user_id":…, "kind":…, "channel":…, "status":…, "attempts":…, "last_error":…, "recipient":…, "decision":…}], "will_send": n}`.
    package static func json(_ plan: RetryPlan, runDate: CalendarDate) -> String {
        let rows = plan.entries.map { entry in
            "{\"user_id\":\(Escaping.json(entry.target.userID)),\"kind\":\(Escaping.json(entry.target.kind)),"
                + "\"channel\":\(Escaping.json(entry.target.channel)),"
                + "\"status\":\(Escaping.json(entry.target.status)),"
                + "\"attempts\":\(entry.target.attempts),\"last_error\":\(entry.target.lastError.map(Escaping.json) ?? "null"),"
                + "\"recipient\":\(entry.target.recipient.map(Escaping.json) ?? "null"),"
                + "\"decision\":\(Escaping.json(entry.now))}"
        }
        return "{\"run_date\":\(Escaping.json(runDate.description)),\"retry\":[\(rows.joined(separator: ","))],"
            + "\"will_send\":\(plan.usersToSend.count)}\n"
    }
}
