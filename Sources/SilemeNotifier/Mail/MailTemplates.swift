import Foundation
import Mustache

/// The operator-editable mail templates (Mustache): `subject.mustache`, `body.txt.mustache` and an
/// optional `body.html.mustache` in `TEMPLATE_DIR`, or the built-in default text (the design doc's
/// Chinese mail) when no folder is configured.
///
/// Variables: `user_name`, `miss_days`, `last_check_in_date`, `run_date`, `app_name`. The subject and
/// the text body are rendered without escaping; the HTML body escapes every value.
public struct MailTemplates: Sendable {
    private let subject: MustacheTemplate
    private let text: MustacheTemplate
    private let html: MustacheTemplate?

    /// The built-in default subject (same text as `config/templates/subject.mustache`).
    public static let defaultSubject = "[{{app_name}}] 关于 {{user_name}} 的签到提醒\n"
    /// The built-in default body (same text as `config/templates/body.txt.mustache`).
    public static let defaultText = """
        您好，

        您是 {{user_name}} 设置的紧急联系人。

        {{user_name}} 已连续 {{miss_days}} 天未在"{{app_name}}"应用中签到。

        这是一封自动提醒邮件，请您在方便时确认 TA 的状态。

        此致
        {{app_name}}团队

        """

    /// Loads the templates from `directory`, or the built-in defaults when nil.
    public init(directory: String?) throws(ConfigurationError) {
        guard let directory else {
            subject = try Self.compile(Self.defaultSubject, name: "built-in subject", html: false)
            text = try Self.compile(Self.defaultText, name: "built-in body", html: false)
            html = nil
            return
        }
        func read(_ file: String, required: Bool) throws(ConfigurationError) -> String? {
            let path = (directory as NSString).appendingPathComponent(file)
            guard FileManager.default.fileExists(atPath: path) else {
                if required { throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(path) is missing") }
                return nil
            }
            guard let content = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "cannot read \(path) as UTF-8")
            }
            return content
        }
        subject = try Self.compile(read("subject.mustache", required: true)!, name: "subject.mustache", html: false)
        text = try Self.compile(read("body.txt.mustache", required: true)!, name: "body.txt.mustache", html: false)
        html = try read("body.html.mustache", required: false).map { (source) throws(ConfigurationError) in
            try Self.compile(source, name: "body.html.mustache", html: true)
        }
    }

    /// Renders the three parts for `variables`. The subject comes back as one line
    /// (line breaks and runs of white space folded to single spaces).
    public func render(_ variables: TemplateVariables) -> RenderedMail {
        let values = variables.dictionary
        let subjectLine = subject.render(values)
            .split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return RenderedMail(subject: subjectLine, text: text.render(values), html: html?.render(values))
    }

    private static func compile(_ source: String, name: String, html: Bool) throws(ConfigurationError) -> MustacheTemplate {
        do {
            return try MustacheTemplate(string: html ? source : "{{% CONTENT_TYPE: TEXT}}" + source)
        } catch {
            throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(name) is not a valid Mustache template: \(error)")
        }
    }
}
