import Foundation
import Output
import Texts
import Values

/// The acknowledgement page's HTML, pure: what a contact sees after opening the link (docs/acknowledgement.md).
/// No script, one inline style sheet (allowed by its hash in the Content-Security-Policy), one
/// form with the anti-forgery value and a question with no answer chosen (a person chooses, a
/// scanner that submits what it finds says nothing); every value from the database is escaped, and
/// no full address appears (the recipients are shown as their rows recorded them, masked).
package enum AckPageView {
    /// What the page says about the streak (built from the store's facts by `AckPageModel`).
    package struct Model: Sendable {
        /// The user's cleaned name.
        package var userName: String
        /// Days without a check-in, as of today (the alert's count while the streak is open).
        package var missedDays: Int
        /// The last check-in before the streak.
        package var lastCheckIn: CalendarDate
        /// The alert's day.
        package var alertDate: CalendarDate
        /// The day the user checked in again, if they did.
        package var checkedInSince: CalendarDate?
        /// Everyone the alert reached, masked, with whether it is the reader and when they acknowledged.
        package var recipients: [(masked: String, isReader: Bool, acknowledgedAt: String?)]
        /// When the reader acknowledged (`YYYY-MM-DD HH:mm`), if they did.
        package var readerAcknowledgedAt: String?
        /// The anti-forgery value of the form (only shown while the reader can still press).
        package var formField: String
        /// How it ended, if a contact who went said so.
        package var outcome: Said? = nil
        /// Whether the reader may say how it ended: they said "I'm on it", nobody has said how it
        /// ended yet, and the user has not checked in.
        package var canSayOutcome = false

        /// An outcome as the page shows it.
        package struct Said: Sendable {
            /// "They're OK" (else "I couldn't reach them").
            package var ok: Bool
            /// Who said it, masked as the page shows the recipients.
            package var by: String
            /// When (`YYYY-MM-DD HH:mm`).
            package var at: String
            /// Whether the reader said it.
            package var byReader: Bool
        }
    }

    /// The style sheet (small, readable on a 390-pixel phone and on a desktop).
    package static let style = """
        body{margin:0;background:#f4f5f7;color:#1d2433;font:17px/1.6 -apple-system,"Segoe UI","PingFang SC","Noto Sans CJK SC","Microsoft YaHei",sans-serif}\
        main{max-width:34rem;margin:0 auto;padding:1.5rem 1.25rem}\
        .card{background:#fff;border-radius:14px;padding:1.25rem 1.25rem 1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}\
        h1{font-size:1.35rem;line-height:1.35;margin:0 0 .75rem}\
        p{margin:.5rem 0}ul{padding:0;margin:.5rem 0 1rem;list-style:none}\
        li{padding:.45rem 0;border-bottom:1px solid #eceef2;display:flex;justify-content:space-between;gap:.75rem;flex-wrap:wrap}\
        .who{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}\
        .tag{color:#0a6b3d;font-size:.9rem}.muted{color:#5b6475;font-size:.92rem}\
        .ok{background:#e7f6ee;border-radius:10px;padding:.75rem 1rem;color:#0a5a34}\
        button{display:block;width:100%;font:inherit;font-weight:600;font-size:1.1rem;padding:.9rem 1rem;margin-top:1rem;\
        color:#fff;background:#1f6feb;border:0;border-radius:12px;cursor:pointer}\
        button:focus{outline:3px solid #9cc2ff;outline-offset:2px}footer{margin-top:1rem;text-align:center}\
        fieldset{border:0;padding:0;margin:.75rem 0 0}legend{font-weight:600;padding:0;margin-bottom:.25rem}\
        label{display:flex;align-items:center;gap:.6rem;padding:.7rem .9rem;margin-top:.5rem;border:1px solid #d5d9e0;\
        border-radius:10px;cursor:pointer}input[type=radio]{width:1.25rem;height:1.25rem;margin:0}\
        .note{background:#fff6e0;border-radius:10px;padding:.75rem 1rem;color:#6b4a00}
        """

    /// The Content-Security-Policy: nothing but the inline style sheet above and a POST to the
    /// page itself; no script, no frame, no image, no other origin.
    package static let contentSecurityPolicy = "default-src 'none'; style-src '\(Digest.sha256Base64(style))'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// What the page says above its form after a submission that recorded nothing.
    package enum Notice: Sendable {
        /// The form came back without an answer (as a program that submits it as found sends it).
        case chooseOne
        /// The reader answered "I can't go now".
        case notRecorded
        /// The reader answered "No news yet" to how it ended.
        case noNewsYet
    }

    /// The form's field that carries the answer, and its two values.
    package enum Answer: String, Sendable, CaseIterable {
        /// "I can't go now": nothing is recorded.
        case notMe = "no"
        /// "I'm on it": the acknowledgement.
        case going = "yes"

        /// The field's name.
        package static let field = "going"
    }

    /// The outcome form's field and its three values: none preselected, the one that records
    /// nothing first (a program that submits the form as found, or picks the first answer, says
    /// nothing — "They're OK" would close the streak).
    package enum OutcomeAnswer: String, Sendable, CaseIterable {
        /// "No news yet": nothing is recorded.
        case noNews = "none"
        /// "They're OK": the streak is closed, the others told.
        case ok
        /// "I couldn't reach them": the others told, the next step at once.
        case unreachable

        /// The field's name.
        package static let field = "outcome"
    }

    /// The page for `model` in the reader's words (`page.texts` in their language), with the app's
    /// name (and a `notice` after a submission that recorded nothing).
    package static func page(_ model: Model, in t: AckText, appName: String, notice: Notice? = nil) -> String {
        let h = Escaping.html
        var body = "<h1>\(h(t.heading(model.userName, model.missedDays, checkedIn: model.checkedInSince != nil)))</h1>\n"
        if let since = model.checkedInSince {
            body += "<p class=\"ok\">\(h(t.checkedIn(model.userName, since)))</p>\n"
        }
        body += "<p>\(h(t.facts(lastCheckIn: model.lastCheckIn, alertDate: model.alertDate)))</p>\n<ul>\n"
        for recipient in model.recipients {
            let mark = recipient.acknowledgedAt.map { "<span class=\"tag\">\(h(t.onIt($0)))</span>" } ?? ""
            let you = recipient.isReader ? " <span class=\"muted\">\(h(t.you))</span>" : ""
            body += "<li><span class=\"who\">\(h(recipient.masked))\(you)</span>\(mark)</li>\n"
        }
        body += "</ul>\n"
        if let said = model.outcome {
            body += "<p class=\"\(said.ok ? "ok" : "note")\">\(h(t.said(said.ok, by: said.by, at: said.at, byReader: said.byReader)))</p>\n"
        }
        if let at = model.readerAcknowledgedAt {
            if model.outcome == nil { body += "<p class=\"ok\">\(h(t.thanks(at)))</p>\n" }
            if model.canSayOutcome { body += outcomeForm(model, t, notice: notice) }
        } else if model.checkedInSince == nil && model.outcome?.ok != true {
            let others = model.recipients.filter { !$0.isReader && $0.acknowledgedAt != nil }
            if !others.isEmpty { body += "<p>\(h(t.someoneElse))</p>\n" }
            switch notice {
            case .chooseOne: body += "<p class=\"note\">\(h(t.chooseOne))</p>\n"
            case .notRecorded: body += "<p class=\"note\">\(h(t.notRecorded))</p>\n"
            case .noNewsYet, nil: break
            }
            // Two taps for a person (an answer, then Send); none preselected, so that a program
            // that submits the form as it finds it sends no answer and records nothing.
            let field = Answer.field
            body += """
                <form method="post"><input type="hidden" name="form" value="\(h(model.formField))">\
                <p class="muted">\(h(t.explain))</p><fieldset><legend>\(h(t.question(model.userName)))</legend>\
                <label><input type="radio" name="\(field)" value="\(Answer.notMe.rawValue)" required>\(h(t.notMe))</label>\
                <label><input type="radio" name="\(field)" value="\(Answer.going.rawValue)" required>\(h(t.button))</label>\
                </fieldset><button type="submit">\(h(t.send))</button></form>

                """
        }
        return document(title: t.title(appName), language: t.language,
                        body: body + "<footer class=\"muted\">\(h(t.footer(appName)))</footer>")
    }

    /// The form that asks a contact who went how it ended: the same shape as the first question
    /// (the anti-forgery field, no answer chosen, Send), the answer that records nothing first.
    private static func outcomeForm(_ model: Model, _ t: AckText, notice: Notice?) -> String {
        let h = Escaping.html
        var form = ""
        switch notice {
        case .chooseOne: form += "<p class=\"note\">\(h(t.chooseOne))</p>\n"
        case .noNewsYet: form += "<p class=\"note\">\(h(t.noNewsYetRecorded))</p>\n"
        case .notRecorded, nil: break
        }
        let field = OutcomeAnswer.field
        let labels: [(OutcomeAnswer, String)] = [(.noNews, t.noNewsYet), (.ok, t.theyAreOK), (.unreachable, t.couldNotReach)]
        form += "<form method=\"post\"><input type=\"hidden\" name=\"form\" value=\"\(h(model.formField))\">"
            + "<p class=\"muted\">\(h(t.outcomeExplain))</p><fieldset><legend>\(h(t.outcomeQuestion(model.userName)))</legend>"
            + labels.map { "<label><input type=\"radio\" name=\"\(field)\" value=\"\($0.0.rawValue)\" required>\(h($0.1))</label>" }.joined()
            + "</fieldset><button type=\"submit\">\(h(t.send))</button></form>\n"
        return form
    }

    /// The neutral page: the same for every link that is not good (malformed, forged, truncated,
    /// expired, unknown), and for a refused request — it tells nothing about why.
    package static func neutral(in t: AckText, appName: String) -> String {
        document(title: t.title(appName), language: t.language,
                        body: "<h1>\(Escaping.html(t.neutralHeading))</h1>\n<p>\(Escaping.html(t.neutralText))</p>\n")
    }

    private static func document(title: String, language: LanguageTag, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="\(language.identifier)"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width,initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>\(Escaping.html(title))</title><style>\(style)</style></head>
        <body><main><div class="card">
        \(body)</div></main></body></html>

        """
    }
}
