import Texts
import Values

/// The page's words in one language, for one reader: the texts of `page.texts` in the language folders
/// (`config/templates/<language>/`, built in, and an operator's `TEMPLATE_DIR`), as `TextTable`
/// resolves them along the chain, each with the values it shows. Each text is written out whole
/// in its language (no pieces glued together, which reads wrong in one of them).
package struct AckText: Sendable {
    /// The page's texts in every language (`TextTable.page`).
    package let texts: TextTable
    /// The language the page is written in: one of `texts.languages`.
    package let language: LanguageTag

    package init(texts: TextTable, language: LanguageTag) {
        self.texts = texts
        self.language = language
    }

    /// The text `name` with `values`.
    private func say(_ name: String, _ values: [String: TextTable.Value] = [:]) -> String {
        texts.render(name, in: language, values)
    }

    func title(_ app: String) -> String { say("title", ["app_name": .text(app)]) }

    func heading(_ name: String, _ days: Int, checkedIn: Bool) -> String {
        checkedIn ? say("heading_checked_in", ["user_name": .text(name)])
            : say("heading", ["user_name": .text(name), "miss_days": .days(days)])
    }

    func checkedIn(_ name: String, _ date: CalendarDate) -> String {
        say("checked_in", ["user_name": .text(name), "check_in_date": .date(date)])
    }

    func facts(lastCheckIn: CalendarDate, alertDate: CalendarDate) -> String {
        say("facts", ["last_check_in_date": .date(lastCheckIn), "alert_date": .date(alertDate)])
    }

    var you: String { say("you") }

    func onIt(_ at: String) -> String { say("on_it", ["acknowledged_at": .text(at)]) }

    var someoneElse: String { say("someone_else") }

    var explain: String { say("explain") }

    /// The question the form asks: a real choice, so that a program that submits the form as it
    /// finds it (a mail scanner) answers nothing.
    func question(_ name: String) -> String { say("question", ["user_name": .text(name)]) }

    /// The answer that records nothing (first: a program that picks the first choice says no).
    var notMe: String { say("not_me") }

    /// The answer that records the acknowledgement.
    var button: String { say("going") }

    var send: String { say("send") }

    /// After a submission without a choice: nothing was recorded.
    var chooseOne: String { say("choose_one") }

    /// After "I can't go now": nothing was recorded, nobody was told.
    var notRecorded: String { say("not_recorded") }

    func thanks(_ at: String) -> String { say("thanks", ["acknowledged_at": .text(at)]) }

    /// Above the outcome form, to a contact who said "I'm on it".
    var outcomeExplain: String { say("outcome_explain") }

    /// The outcome form's question.
    func outcomeQuestion(_ name: String) -> String { say("outcome_question", ["user_name": .text(name)]) }

    /// The outcome answer that records nothing (first).
    var noNewsYet: String { say("no_news_yet") }

    /// "They're OK": the streak is closed.
    var theyAreOK: String { say("they_are_ok") }

    /// "I couldn't reach them": the next step comes at once.
    var couldNotReach: String { say("could_not_reach") }

    /// After "No news yet": nothing was recorded.
    var noNewsYetRecorded: String { say("no_news_yet_recorded") }

    /// What was said about how it ended, and by whom (the reader, or another contact, masked).
    func said(_ ok: Bool, by: String, at: String, byReader: Bool) -> String {
        say((ok ? "said_ok" : "said_unreachable") + (byReader ? "_by_you" : ""), ["outcome_by": .text(by), "outcome_at": .text(at)])
    }

    func footer(_ app: String) -> String { say("footer", ["app_name": .text(app)]) }

    var neutralHeading: String { say("neutral_heading") }

    var neutralText: String { say("neutral_text") }
}
