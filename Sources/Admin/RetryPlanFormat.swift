import Values
import Output
import Rule

/// The `retry --dry-run` listing as a table (100 columns) or one JSON object.
package enum RetryPlanFormat {
    /// `USER  KIND  STATUS  TRIES  LANG  NOW  LAST ERROR` lines and a total; then, for each mail
    /// not written in the language its row asks for, why (`no templates in ru`).
    package static func table(_ plan: RetryPlan, runDate: CalendarDate) -> String {
        var text = "Retry for \(runDate): \(plan.usersToSend.count) of \(plan.entries.count) failed or stuck would be sent again\n"
        text += "USER      KIND          STATUS   TRIES  LANG     NOW               LAST ERROR\n"
        var fallbacks: [String] = []
        for entry in plan.entries {
            let now = entry.now
            let error = Printable.text(entry.target.lastError ?? "")
            let user = String(entry.target.userID.prefix(8))
            text += DisplayWidth.pad(user, to: 8) + "  "
                + DisplayWidth.pad(entry.target.channel.shortLabel(entry.target.kind), to: 12) + "  "
                + DisplayWidth.pad(entry.target.status, to: 7) + "  "
                + DisplayWidth.pad(String(entry.target.attempts), to: 5) + "  "
                + DisplayWidth.pad(entry.language?.tag.identifier ?? "-", to: 7) + "  "
                + DisplayWidth.pad(now, to: 16) + "  "
                + DisplayWidth.truncate(error, to: 100 - 8 - 12 - 7 - 5 - 7 - 16 - 12) + "\n"
            if let language = entry.language, let fallback = language.fallback {
                fallbacks.append("  \(user)  \(Printable.text(entry.target.recipient ?? "")): \(fallback) → \(language.tag)\n")
            }
        }
        if !fallbacks.isEmpty { text += "Written in another language than asked for:\n" + fallbacks.joined() }
        return text
    }

    /// `{"run_date":…, "retry":[{"user_id":…, "kind":…, "channel":…, "status":…, "attempts":…, "last_error":…, "recipient":…,
    /// "language":…, "decision":…}], "will_send": n}` — `language` null on a webhook event, and a
    /// `language_fallback` (why not the one asked for) where there is one, as in the dry run.
    package static func json(_ plan: RetryPlan, runDate: CalendarDate) -> String {
        let rows = plan.entries.map { entry in
            "{\"user_id\":\(Escaping.json(entry.target.userID)),\"kind\":\(Escaping.json(entry.target.kind)),"
                + "\"channel\":\(Escaping.json(entry.target.channel.rawValue)),"
                + "\"status\":\(Escaping.json(entry.target.status)),"
                + "\"attempts\":\(entry.target.attempts),\"last_error\":\(entry.target.lastError.map(Escaping.json) ?? "null"),"
                + "\"recipient\":\(entry.target.recipient.map(Escaping.json) ?? "null"),"
                + "\"language\":\(entry.language.map { Escaping.json($0.tag.identifier) } ?? "null"),"
                + (entry.language?.fallback.map { "\"language_fallback\":\(Escaping.json($0.description))," } ?? "")
                + "\"decision\":\(Escaping.json(entry.now))}"
        }
        return "{\"run_date\":\(Escaping.json(runDate.description)),\"retry\":[\(rows.joined(separator: ","))],"
            + "\"will_send\":\(plan.usersToSend.count)}\n"
    }
}
