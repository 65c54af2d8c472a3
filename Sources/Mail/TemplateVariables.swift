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

    /// Creates the values.
    public init(userName: String, missDays: Int, lastCheckInDate: CalendarDate, runDate: CalendarDate, appName: String) {
        self.userName = userName
        self.missDays = missDays
        self.lastCheckInDate = lastCheckInDate
        self.runDate = runDate
        self.appName = appName
    }

    /// The values by template name.
    package var dictionary: [String: String] {
        ["user_name": userName, "miss_days": String(missDays), "last_check_in_date": lastCheckInDate.description,
         "run_date": runDate.description, "app_name": appName]
    }
}
