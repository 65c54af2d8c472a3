import Values

/// The values a mail template can use.
package struct TemplateVariables: Sendable, Equatable {
    /// `{{user_name}}`: the user's cleaned name.
    package var userName: String
    /// `{{miss_days}}`: consecutive missed days `m`.
    package var missDays: Int
    /// `{{last_check_in_date}}`: `L`, `YYYY-MM-DD`.
    package var lastCheckInDate: CalendarDate
    /// `{{run_date}}`: `D`, `YYYY-MM-DD`.
    package var runDate: CalendarDate
    /// `{{app_name}}`: `APP_NAME`.
    package var appName: String
    /// `{{paused_until}}`: the last day of the user's pause, `YYYY-MM-DD`, when the missed days are
    /// counted from the end of a pause (`miss_days` days without a check-in since); unset otherwise,
    /// so `{{#paused_until}}…{{/paused_until}}` shows text only in a mail after a pause.
    package var pausedUntil: CalendarDate?
    /// `{{alert_date}}`: the date of the alert an all-clear or a follow-up answers.
    package var alertDate: CalendarDate?
    /// `{{checked_in_at}}`: when the check-in that ended the streak came (`YYYY-MM-DD HH:mm` in
    /// the service zone), for an all-clear; `{{check_in_date}}` its date.
    package var checkedInAt: String?
    /// `{{check_in_date}}`.
    package var checkInDate: CalendarDate?
    /// `{{contact_email}}`: the contact's address (an introduction says who was named).
    package var contactEmail: String?
    /// `{{threshold_days}}`: `MISS_THRESHOLD_DAYS` (an introduction says when an alert comes).
    package var thresholdDays: Int?
    /// `{{ack_url}}`: this contact's acknowledgement link (an alert or a follow-up, with
    /// `ACK_BASE_URL` set); unset otherwise, so `{{#ack_url}}…{{/ack_url}}` shows text only then.
    package var ackURL: String?
    /// `{{acknowledged_by}}`: who acknowledged (masked address), in an `acknowledged` notice.
    package var acknowledgedBy: String?
    /// `{{acknowledged_at}}`: when (`YYYY-MM-DD HH:mm` in the service zone), in an `acknowledged` notice.
    package var acknowledgedAt: String?
    /// `{{outcome_by}}`: who said how it ended (masked address), in an outcome notice.
    package var outcomeBy: String?
    /// `{{outcome_at}}`: when (`YYYY-MM-DD HH:mm` in the service zone), in an outcome notice.
    package var outcomeAt: String?

    /// Creates the values.
    package init(userName: String, missDays: Int, lastCheckInDate: CalendarDate, runDate: CalendarDate, appName: String,
                pausedUntil: CalendarDate? = nil) {
        self.userName = userName
        self.missDays = missDays
        self.lastCheckInDate = lastCheckInDate
        self.runDate = runDate
        self.appName = appName
        self.pausedUntil = pausedUntil
    }

    /// The values by template name.
    package var dictionary: [String: String] { dictionary(wordedIn: nil) }

    /// The values by template name, and with `language` each count's and date's `_text` twin
    /// written for it by Foundation (`miss_days_text` "2 days", `alert_date_text` "January 13,
    /// 2026"): formatting costs, so only for a template that names one.
    package func dictionary(wordedIn language: LanguageTag?) -> [String: String] {
        var values = plainValues
        guard let language else { return values }
        values["miss_days_text"] = language.days(missDays)
        values["last_check_in_date_text"] = language.date(lastCheckInDate)
        values["run_date_text"] = language.date(runDate)
        if let pausedUntil { values["paused_until_text"] = language.date(pausedUntil) }
        if let alertDate { values["alert_date_text"] = language.date(alertDate) }
        if let checkInDate { values["check_in_date_text"] = language.date(checkInDate) }
        if let thresholdDays { values["threshold_days_text"] = language.days(thresholdDays) }
        return values
    }

    private var plainValues: [String: String] {
        var values = ["user_name": userName, "miss_days": String(missDays), "last_check_in_date": lastCheckInDate.description,
                      "run_date": runDate.description, "app_name": appName]
        if let pausedUntil { values["paused_until"] = pausedUntil.description }
        if let alertDate { values["alert_date"] = alertDate.description }
        if let checkedInAt { values["checked_in_at"] = checkedInAt }
        if let checkInDate { values["check_in_date"] = checkInDate.description }
        if let contactEmail { values["contact_email"] = contactEmail }
        if let thresholdDays { values["threshold_days"] = String(thresholdDays) }
        if let ackURL { values["ack_url"] = ackURL }
        if let acknowledgedBy { values["acknowledged_by"] = acknowledgedBy }
        if let acknowledgedAt { values["acknowledged_at"] = acknowledgedAt }
        if let outcomeBy { values["outcome_by"] = outcomeBy }
        if let outcomeAt { values["outcome_at"] = outcomeAt }
        return values
    }
}
