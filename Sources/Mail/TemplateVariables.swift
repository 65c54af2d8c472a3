import Values

/// The values a mail template can use.
public struct TemplateVariables: Sendable, Equatable {
    /// `{{user_name}}`: the user's cleaned name.
    public var userName: String
    /// `{{miss_days}}`: consecutive missed days `m`.
    public var missDays: Int
    /// `{{last_check_in_date}}`: `L`, `YYYY-MM-DD`.
    public var lastCheckInDate: CalendarDate
    /// `{{run_date}}`: `D`, `YYYY-MM-DD`.
    public var runDate: CalendarDate
    /// `{{app_name}}`: `APP_NAME`.
    public var appName: String
    /// `{{paused_until}}`: the last day of the user's pause, `YYYY-MM-DD`, when the missed days are
    /// counted from the end of a pause (`miss_days` days without a check-in since); unset otherwise,
    /// so `{{#paused_until}}…{{/paused_until}}` shows text only in a mail after a pause.
    public var pausedUntil: CalendarDate?
    /// `{{alert_date}}`: the date of the alert an all-clear or a follow-up answers.
    public var alertDate: CalendarDate?
    /// `{{checked_in_at}}`: when the check-in that ended the streak came (`YYYY-MM-DD HH:mm` in
    /// the service zone), for an all-clear; `{{check_in_date}}` its date.
    public var checkedInAt: String?
    /// `{{check_in_date}}`.
    public var checkInDate: CalendarDate?
    /// `{{contact_email}}`: the contact's address (an introduction says who was named).
    public var contactEmail: String?
    /// `{{threshold_days}}`: `MISS_THRESHOLD_DAYS` (an introduction says when an alert comes).
    public var thresholdDays: Int?
    /// `{{ack_url}}`: this contact's acknowledgement link (an alert or a follow-up, with
    /// `ACK_BASE_URL` set); unset otherwise, so `{{#ack_url}}…{{/ack_url}}` shows text only then.
    public var ackURL: String?
    /// `{{acknowledged_by}}`: who acknowledged (masked address), in an `acknowledged` notice.
    public var acknowledgedBy: String?
    /// `{{acknowledged_at}}`: when (`YYYY-MM-DD HH:mm` in the service zone), in an `acknowledged` notice.
    public var acknowledgedAt: String?

    /// Creates the values.
    public init(userName: String, missDays: Int, lastCheckInDate: CalendarDate, runDate: CalendarDate, appName: String,
                pausedUntil: CalendarDate? = nil) {
        self.userName = userName
        self.missDays = missDays
        self.lastCheckInDate = lastCheckInDate
        self.runDate = runDate
        self.appName = appName
        self.pausedUntil = pausedUntil
    }

    /// The values by template name.
    package var dictionary: [String: String] {
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
        return values
    }
}
