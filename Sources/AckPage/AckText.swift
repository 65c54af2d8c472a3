import Values

/// The page's words in one language (`AckLanguage`): simplified Chinese (the product's own),
/// traditional Chinese (in the words of the shipped `zh-Hant` mails: 聯絡人, 簽到, 「」) and English.
struct AckText {
    let language: AckLanguage

    init(_ language: AckLanguage) { self.language = language }

    /// The text in the page's language: each phrase is written out whole in each language (no
    /// pieces glued together, which reads wrong in one of them).
    private func say(_ hans: String, _ hant: String, _ en: String) -> String {
        switch language {
        case .zhHans: hans
        case .zhHant: hant
        case .en: en
        }
    }

    var title: String { say("紧急联系人", "緊急聯絡人", "Emergency contact") }

    func heading(_ name: String, _ days: Int, checkedIn: Bool) -> String {
        if checkedIn { return say("\(name) 已恢复签到", "\(name) 已恢復簽到", "\(name) has checked in again") }
        // English counts through Foundation's plural rules ("1 day", "2 days"), as the mails do.
        return say("\(name) 已连续 \(days) 天未签到", "\(name) 已連續 \(days) 天未簽到",
                   "\(name) has not checked in for \(LanguageTag("en")!.days(days))")
    }

    func checkedIn(_ name: String, _ date: CalendarDate) -> String {
        say("好消息：\(name) 已于 \(date) 签到，无需再前往查看。", "好消息：\(name) 已於 \(date) 簽到，無需再前往查看。",
            "Good news: \(name) checked in on \(date). No need to go round.")
    }

    func facts(lastCheckIn: CalendarDate, alertDate: CalendarDate) -> String {
        say("最后一次签到：\(lastCheckIn)。我们在 \(alertDate) 通知了以下紧急联系人：",
            "最後一次簽到：\(lastCheckIn)。我們在 \(alertDate) 通知了以下緊急聯絡人：",
            "Last check-in: \(lastCheckIn). On \(alertDate) we told these emergency contacts:")
    }

    var you: String { say("（您）", "（您）", "(you)") }

    func onIt(_ at: String) -> String { say("✓ 正在前往查看（\(at)）", "✓ 正在前往查看（\(at)）", "✓ on it (\(at))") }

    var someoneElse: String {
        say("已有其他联系人正在前往查看。如果您也能去，仍可以告诉大家。", "已有其他聯絡人正在前往查看。如果您也能去，仍可以告訴大家。",
            "Another contact is already on it. If you are going too, you can still say so.")
    }

    var explain: String {
        say("如果您正在前往查看 TA，请选择“我去看看”并发送：我们会告诉其他紧急联系人。",
            "如果您正在前往查看 TA，請選擇「我去看看」並送出：我們會告訴其他緊急聯絡人。",
            "If you are going round to check on them, choose “I'm on it” and send: we will tell the other emergency contacts.")
    }

    /// The question the form asks: a real choice, so that a program that submits the form as it
    /// finds it (a mail scanner) answers nothing.
    func question(_ name: String) -> String {
        say("您现在能去看看 \(name) 吗？", "您現在能去看看 \(name) 嗎？", "Can you go round to check on \(name)?")
    }

    /// The answer that records nothing (first: a program that picks the first choice says no).
    var notMe: String { say("我现在去不了", "我現在去不了", "I can't go now") }

    /// The answer that records the acknowledgement.
    var button: String { say("我去看看", "我去看看", "I'm on it") }

    var send: String { say("发送", "送出", "Send") }

    /// After a submission without a choice: nothing was recorded.
    var chooseOne: String {
        say("请先选择一个答案，再点击“发送”。", "請先選擇一個答案，再按「送出」。", "Please choose one of the answers, then press Send.")
    }

    /// After "I can't go now": nothing was recorded, nobody was told.
    var notRecorded: String {
        say("好的，我们没有通知任何人。如果您之后能去，可以再打开这个链接。",
            "好的，我們沒有通知任何人。如果您之後能去，可以再開啟這個連結。",
            "All right: nothing was recorded and nobody was told. If you can go later, open this link again.")
    }

    func thanks(_ at: String) -> String {
        say("谢谢！您已于 \(at) 确认正在前往查看，其他紧急联系人会收到通知。",
            "謝謝！您已於 \(at) 確認正在前往查看，其他緊急聯絡人會收到通知。",
            "Thank you. You said at \(at) that you are on it; the other emergency contacts are being told.")
    }

    /// Above the outcome form, to a contact who said "I'm on it".
    var outcomeExplain: String {
        say("见到 TA 或联系过之后，请告诉其他紧急联系人结果：", "見到 TA 或聯絡過之後，請告訴其他緊急聯絡人結果：",
            "Once you have seen them, or tried, tell the other emergency contacts how it went.")
    }

    /// The outcome form's question.
    func outcomeQuestion(_ name: String) -> String { say("\(name) 怎么样？", "\(name) 怎麼樣？", "How is \(name)?") }

    /// The outcome answer that records nothing (first).
    var noNewsYet: String { say("还没有结果", "還沒有結果", "No news yet") }

    /// "They're OK": the streak is closed.
    var theyAreOK: String { say("TA 一切安好", "TA 一切安好", "They're OK") }

    /// "I couldn't reach them": the next step comes at once.
    var couldNotReach: String { say("我联系不上 TA", "我聯絡不上 TA", "I couldn't reach them") }

    /// After "No news yet": nothing was recorded.
    var noNewsYetRecorded: String {
        say("好的，没有记录任何内容。有结果时请再打开这个链接。", "好的，沒有記錄任何內容。有結果時請再開啟這個連結。",
            "All right: nothing was recorded. Open this link again when you know more.")
    }

    /// What was said about how it ended, and by whom (the reader, or another contact, masked).
    func said(_ ok: Bool, by: String, at: String, byReader: Bool) -> String {
        switch (ok, byReader) {
        case (true, true):
            say("您已于 \(at) 告知：TA 一切安好。其他紧急联系人会收到通知。", "您已於 \(at) 告知：TA 一切安好。其他緊急聯絡人會收到通知。",
                "You said at \(at) that they're OK; the other emergency contacts are being told.")
        case (false, true):
            say("您已于 \(at) 告知：没能联系上 TA。其他紧急联系人会收到通知。", "您已於 \(at) 告知：沒能聯絡上 TA。其他緊急聯絡人會收到通知。",
                "You said at \(at) that you couldn't reach them; the other emergency contacts are being told.")
        case (true, false):
            say("\(by) 已于 \(at) 告知：TA 一切安好。", "\(by) 已於 \(at) 告知：TA 一切安好。", "\(by) said at \(at) that they're OK.")
        case (false, false):
            say("\(by) 已于 \(at) 告知：没能联系上 TA。如果您能去，请告诉大家。", "\(by) 已於 \(at) 告知：沒能聯絡上 TA。如果您能去，請告訴大家。",
                "\(by) said at \(at) that they couldn't reach them. If you can go, please say so.")
        }
    }

    func footer(_ app: String) -> String {
        say("\(app) · 这是一封提醒邮件中的链接", "\(app) · 這是一封提醒郵件中的連結", "\(app) · a link from an alert mail")
    }

    var neutralHeading: String { say("此链接无法使用", "此連結無法使用", "This link cannot be used") }

    var neutralText: String {
        say("链接可能已过期或不完整。请打开提醒邮件中的完整链接；如有疑问，请直接联系 TA。",
            "連結可能已過期或不完整。請開啟提醒郵件中的完整連結；如有疑問，請直接聯絡 TA。",
            "It may have expired or be incomplete. Open the whole link from the alert mail, or contact them directly.")
    }
}
