import Config
import Foundation
import Mustache
import Output
import Rule

/// The operator-editable mail templates (Mustache), one set per kind of message: for the alert
/// `subject.mustache`, `body.txt.mustache` and an optional `body.html.mustache` in `TEMPLATE_DIR`;
/// for the other kinds the same names prefixed with the kind (`all_clear.subject.mustache`,
/// `follow_up.body.txt.mustache`, `introduction.body.html.mustache`…). A kind whose subject and
/// text are not in the folder uses its built-in default (the Chinese text of `config/templates`),
/// so a folder made before a kind existed keeps working. No folder: every kind's built-in default.
///
/// Variables: `user_name`, `miss_days`, `last_check_in_date`, `run_date`, `app_name`, and
/// `paused_until` (set only in a mail after a pause: use it as a section); for an all-clear also
/// `checked_in_at` (date and time in the service zone) and `check_in_date`; for an all-clear and
/// a follow-up `alert_date`; for an introduction `contact_email` and `threshold_days`; for an alert
/// and a follow-up `ack_url` (set only with `ACK_BASE_URL`: use it as a section); for an
/// `acknowledged` notice `alert_date`, `acknowledged_by` (masked) and `acknowledged_at`; for an
/// `escalation` `alert_date` and `ack_url`; for the outcome notices (`outcome_ok`,
/// `outcome_unreachable`) `alert_date`, `outcome_by` (masked) and `outcome_at`, and in
/// `outcome_unreachable` `ack_url`. The subject
/// and the text body are rendered without escaping; the HTML body escapes every value (see `render`).
package struct MailTemplates: Sendable {
    /// The three templates of one kind.
    private struct Set: Sendable {
        let subject: MustacheTemplate
        let text: MustacheTemplate
        let html: MustacheTemplate?
    }

    private let sets: [DeliveryJob.Kind: Set]

    /// The built-in default subject (same text as `config/templates/subject.mustache`).
    package static let defaultSubject = "[{{app_name}}] 关于 {{user_name}} 的签到提醒\n"
    /// The built-in default body (same text as `config/templates/body.txt.mustache`).
    package static let defaultText = """
        您好，

        您是 {{user_name}} 设置的紧急联系人。

        {{user_name}} {{#paused_until}}曾设置外出暂停至 {{paused_until}}，暂停结束后{{/paused_until}}已连续 {{miss_days}} 天未在"{{app_name}}"应用中签到。

        这是一封自动提醒邮件，请您在方便时确认 TA 的状态。

        {{#ack_url}}
        如果您正在前往查看 TA，请打开下面的链接并选择"我去看看"，其他紧急联系人会收到通知：
        {{ack_url}}

        {{/ack_url}}
        此致
        {{app_name}}团队

        """

    /// The built-in subject and text of each kind (the same text as the files of `config/templates`).
    package static let defaults: [DeliveryJob.Kind: (subject: String, text: String)] = [
        .alert: (defaultSubject, defaultText),
        .allClear: ("[{{app_name}}] {{user_name}} 已签到，一切正常\n", """
            您好，

            {{user_name}} 已于 {{checked_in_at}} 在"{{app_name}}"应用中签到。

            我们在 {{alert_date}} 曾告知您 TA 已连续 {{miss_days}} 天未签到；现在 TA 已恢复签到，您无需再为此担心。

            这是一封自动通知邮件。

            此致
            {{app_name}}团队

            """),
        .followUp: ("[{{app_name}}] 再次提醒：{{user_name}} 仍未签到\n", """
            您好，

            我们在 {{alert_date}} 告知您 {{user_name}} 未在"{{app_name}}"应用中签到。截至今天（{{run_date}}），TA 已连续 {{miss_days}} 天未签到（最后一次签到：{{last_check_in_date}}）。

            如果您还没有联系上 TA，请尽快确认 TA 的状态。

            {{#ack_url}}
            如果您正在前往查看 TA，请打开下面的链接并选择"我去看看"，其他紧急联系人会收到通知：
            {{ack_url}}

            {{/ack_url}}
            这是一封自动提醒邮件，不会再次发送。

            此致
            {{app_name}}团队

            """),
        .introduction: ("[{{app_name}}] {{user_name}} 将您设为紧急联系人\n", """
            您好，

            {{user_name}} 在"{{app_name}}"应用中将您（{{contact_email}}）设置为紧急联系人。

            "{{app_name}}"是一款每日签到应用：TA 每天点一下按钮报平安。如果 TA 连续 {{threshold_days}} 天没有签到，我们会给您发送一封提醒邮件，请您确认 TA 的状态；TA 恢复签到后，我们也会告诉您。

            您无需做任何操作。如果您不认识 TA，或不愿意担任紧急联系人，请联系 TA 在应用中删除您的邮箱。

            此致
            {{app_name}}团队

            """),
        .acknowledged: ("[{{app_name}}] 已有联系人正在前往查看 {{user_name}}\n", """
            您好，

            我们在 {{alert_date}} 告知您 {{user_name}} 已连续 {{miss_days}} 天未在"{{app_name}}"应用中签到。

            另一位紧急联系人（{{acknowledged_by}}）已于 {{acknowledged_at}} 确认：正在前往查看 TA。

            如需了解情况，您可以联系 TA 或这位联系人。TA 恢复签到后，我们会再通知您。

            这是一封自动通知邮件。

            此致
            {{app_name}}团队

            """),
        .escalation: ("[{{app_name}}] 仍无人回应：请确认 {{user_name}} 的状态\n", """
            您好，

            我们在 {{alert_date}} 告知您 {{user_name}} 已连续 {{miss_days}} 天未在"{{app_name}}"应用中签到。到现在为止，还没有任何紧急联系人表示正在前往查看 TA，TA 也没有签到。

            请您尽快设法联系 TA，或请 TA 身边的人去看看。

            {{#ack_url}}
            如果您正在前往查看 TA，请打开下面的链接并选择"我去看看"，其他紧急联系人会收到通知：
            {{ack_url}}

            {{/ack_url}}
            这是一封自动提醒邮件。

            此致
            {{app_name}}团队

            """),
        .outcomeOK: ("[{{app_name}}] {{user_name}} 一切安好\n", """
            您好，

            我们在 {{alert_date}} 告知您 {{user_name}} 已连续 {{miss_days}} 天未在"{{app_name}}"应用中签到。

            前往查看的紧急联系人（{{outcome_by}}）已于 {{outcome_at}} 确认：TA 一切安好。

            您无需再为此担心。

            这是一封自动通知邮件。

            此致
            {{app_name}}团队

            """),
        .outcomeUnreachable: ("[{{app_name}}] 仍未联系上 {{user_name}}\n", """
            您好，

            我们在 {{alert_date}} 告知您 {{user_name}} 已连续 {{miss_days}} 天未在"{{app_name}}"应用中签到。

            前往查看的紧急联系人（{{outcome_by}}）已于 {{outcome_at}} 告知：没能联系上 TA。

            请您尽快设法联系 TA，或请 TA 身边的人去看看。

            {{#ack_url}}
            如果您正在前往查看 TA，请打开下面的链接并选择"我去看看"，其他紧急联系人会收到通知：
            {{ack_url}}

            {{/ack_url}}
            这是一封自动提醒邮件。

            此致
            {{app_name}}团队

            """),
    ]

    /// The file name of `part` (`subject.mustache`, `body.txt.mustache`, `body.html.mustache`) for `kind`.
    package static func fileName(_ part: String, kind: DeliveryJob.Kind) -> String {
        kind == .alert ? part : "\(kind.rawValue).\(part)"
    }

    /// Loads the templates from `directory`, or the built-in defaults when nil.
    package init(directory: String?) throws(ConfigurationError) {
        var sets: [DeliveryJob.Kind: Set] = [:]
        for kind in DeliveryJob.Kind.mailed {
            sets[kind] = try Self.load(kind, directory: directory)
        }
        self.sets = sets
    }

    /// One kind's set: from `directory` when its subject or text is there (then both must be),
    /// else the built-in default.
    private static func load(_ kind: DeliveryJob.Kind, directory: String?) throws(ConfigurationError) -> Set {
        let builtIn = defaults[kind]!
        func read(_ part: String, required: Bool) throws(ConfigurationError) -> String? {
            guard let directory else { return nil }
            let path = (directory as NSString).appendingPathComponent(fileName(part, kind: kind))
            guard FileManager.default.fileExists(atPath: path) else {
                if required { throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(path) is missing") }
                return nil
            }
            guard let content = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "cannot read \(path) as UTF-8")
            }
            return content
        }
        // The alert's files are required in a folder; another kind's are used when either is there.
        let ownSubject = try read("subject.mustache", required: false)
        let ownText = try read("body.txt.mustache", required: false)
        let own = ownSubject != nil || ownText != nil
        guard directory != nil, kind == .alert || own else {
            return Set(subject: try compile(builtIn.subject, name: "built-in \(kind.rawValue) subject"),
                       text: try compile(builtIn.text, name: "built-in \(kind.rawValue) body"), html: nil)
        }
        let subject = try read("subject.mustache", required: true)!
        let text = try read("body.txt.mustache", required: true)!
        let html = try read("body.html.mustache", required: false)
        return Set(subject: try compile(subject, name: fileName("subject.mustache", kind: kind)),
                   text: try compile(text, name: fileName("body.txt.mustache", kind: kind)),
                   html: try html.map { (source) throws(ConfigurationError) in
                       try compile(source, name: fileName("body.html.mustache", kind: kind))
                   })
    }

    /// Renders the three parts of `kind` (one of `DeliveryJob.Kind.mailed`: a reminder is never
    /// mailed) for `variables`. The subject comes back as one line
    /// (line breaks and runs of white space folded to single spaces).
    ///
    /// The HTML body gets every value HTML-escaped here, one Unicode scalar at a time, and its
    /// template is compiled without Mustache's own escaping: Mustache escapes by `Character`, so a
    /// `"` or `<` followed by a combining mark or a joiner (one grapheme cluster) went through
    /// unescaped and could end an attribute value. `{{{…}}}` is escaped as well.
    package func render(_ variables: TemplateVariables, kind: DeliveryJob.Kind = .alert) -> RenderedMail {
        let set = sets[kind]!
        let values = variables.dictionary
        let subjectLine = Self.singleLine(set.subject.render(values))
        return RenderedMail(subject: subjectLine, text: set.text.render(values),
                            html: set.html?.render(values.mapValues(Escaping.html)))
    }

    /// `text` on one line: each run of white space (any Unicode `White_Space` scalar: CR, LF, TAB,
    /// NEL, U+2028, ideographic space…) becomes one space, and the ends are trimmed.
    ///
    /// Works on scalars, not `Character`s: a cluster that starts with a space and carries a
    /// combining mark or a joiner (`" \u{301}"`) is white space to `Character.isWhitespace`, and
    /// splitting on it dropped the mark from the user's name in the subject.
    package static func singleLine(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !scalars.isEmpty
            } else {
                if pendingSpace { scalars.append(" ") }
                pendingSpace = false
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// Compiles a template without Mustache's escaping (values of the HTML body are escaped by
    /// `render` beforehand).
    private static func compile(_ source: String, name: String) throws(ConfigurationError) -> MustacheTemplate {
        do {
            return try MustacheTemplate(string: "{{% CONTENT_TYPE: TEXT}}" + source)
        } catch {
            throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(name) is not a valid Mustache template: \(error)")
        }
    }
}
