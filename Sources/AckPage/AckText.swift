import Values

/// The page's words in one language (`AckLanguage`): Chinese (the product's own) and English.
struct AckText {
    let language: AckLanguage

    init(_ language: AckLanguage) { self.language = language }

    private var zh: Bool { language == .zh }

    var title: String { zh ? "紧急联系人" : "Emergency contact" }

    func heading(_ name: String, _ days: Int, checkedIn: Bool) -> String {
        if checkedIn { return zh ? "\(name) 已恢复签到" : "\(name) has checked in again" }
        return zh ? "\(name) 已连续 \(days) 天未签到" : "\(name) has not checked in for \(days) day\(days == 1 ? "" : "s")"
    }

    func checkedIn(_ name: String, _ date: CalendarDate) -> String {
        zh ? "好消息：\(name) 已于 \(date) 签到，无需再前往查看。" : "Good news: \(name) checked in on \(date). No need to go round."
    }

    func facts(lastCheckIn: CalendarDate, alertDate: CalendarDate) -> String {
        zh ? "最后一次签到：\(lastCheckIn)。我们在 \(alertDate) 通知了以下紧急联系人："
            : "Last check-in: \(lastCheckIn). On \(alertDate) we told these emergency contacts:"
    }

    var you: String { zh ? "（您）" : "(you)" }

    func onIt(_ at: String) -> String { zh ? "✓ 正在前往查看（\(at)）" : "✓ on it (\(at))" }

    var someoneElse: String {
        zh ? "已有其他联系人正在前往查看。如果您也能去，仍可以告诉大家。" : "Another contact is already on it. If you are going too, you can still say so."
    }

    var explain: String {
        zh ? "如果您正在前往查看 TA，请选择“我去看看”并发送：我们会告诉其他紧急联系人。"
            : "If you are going round to check on them, choose “I'm on it” and send: we will tell the other emergency contacts."
    }

    /// The question the form asks: a real choice, so that a program that submits the form as it
    /// finds it (a mail scanner) answers nothing.
    func question(_ name: String) -> String { zh ? "您现在能去看看 \(name) 吗？" : "Can you go round to check on \(name)?" }

    /// The answer that records nothing (first: a program that picks the first choice says no).
    var notMe: String { zh ? "我现在去不了" : "I can't go now" }

    /// The answer that records the acknowledgement.
    var button: String { zh ? "我去看看" : "I'm on it" }

    var send: String { zh ? "发送" : "Send" }

    /// After a submission without a choice: nothing was recorded.
    var chooseOne: String { zh ? "请先选择一个答案，再点击“发送”。" : "Please choose one of the answers, then press Send." }

    /// After "I can't go now": nothing was recorded, nobody was told.
    var notRecorded: String {
        zh ? "好的，我们没有通知任何人。如果您之后能去，可以再打开这个链接。"
            : "All right: nothing was recorded and nobody was told. If you can go later, open this link again."
    }

    func thanks(_ at: String) -> String {
        zh ? "谢谢！您已于 \(at) 确认正在前往查看，其他紧急联系人会收到通知。"
            : "Thank you. You said at \(at) that you are on it; the other emergency contacts are being told."
    }

    /// Above the outcome form, to a contact who said "I'm on it".
    var outcomeExplain: String {
        zh ? "见到 TA 或联系过之后，请告诉其他紧急联系人结果：" : "Once you have seen them, or tried, tell the other emergency contacts how it went."
    }

    /// The outcome form's question.
    func outcomeQuestion(_ name: String) -> String { zh ? "\(name) 怎么样？" : "How is \(name)?" }

    /// The outcome answer that records nothing (first).
    var noNewsYet: String { zh ? "还没有结果" : "No news yet" }

    /// "They're OK": the streak is closed.
    var theyAreOK: String { zh ? "TA 一切安好" : "They're OK" }

    /// "I couldn't reach them": the next step comes at once.
    var couldNotReach: String { zh ? "我联系不上 TA" : "I couldn't reach them" }

    /// After "No news yet": nothing was recorded.
    var noNewsYetRecorded: String {
        zh ? "好的，没有记录任何内容。有结果时请再打开这个链接。" : "All right: nothing was recorded. Open this link again when you know more."
    }

    /// What was said about how it ended, and by whom (the reader, or another contact, masked).
    func said(_ ok: Bool, by: String, at: String, byReader: Bool) -> String {
        switch (ok, byReader, zh) {
        case (true, true, true): "您已于 \(at) 告知：TA 一切安好。其他紧急联系人会收到通知。"
        case (true, true, false): "You said at \(at) that they're OK; the other emergency contacts are being told."
        case (false, true, true): "您已于 \(at) 告知：没能联系上 TA。其他紧急联系人会收到通知。"
        case (false, true, false): "You said at \(at) that you couldn't reach them; the other emergency contacts are being told."
        case (true, false, true): "\(by) 已于 \(at) 告知：TA 一切安好。"
        case (true, false, false): "\(by) said at \(at) that they're OK."
        case (false, false, true): "\(by) 已于 \(at) 告知：没能联系上 TA。如果您能去，请告诉大家。"
        case (false, false, false): "\(by) said at \(at) that they couldn't reach them. If you can go, please say so."
        }
    }

    func footer(_ app: String) -> String { zh ? "\(app) · 这是一封提醒邮件中的链接" : "\(app) · a link from an alert mail" }

    var neutralHeading: String { zh ? "此链接无法使用" : "This link cannot be used" }

    var neutralText: String {
        zh ? "链接可能已过期或不完整。请打开提醒邮件中的完整链接；如有疑问，请直接联系 TA。"
            : "It may have expired or be incomplete. Open the whole link from the alert mail, or contact them directly."
    }
}
