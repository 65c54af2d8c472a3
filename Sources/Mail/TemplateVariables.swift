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
        return values
    }
}
