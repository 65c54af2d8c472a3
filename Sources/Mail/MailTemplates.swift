import Config
import Foundation
import Mustache
import Output

/// The operator-editable mail templates (Mustache): `subject.mustache`, `body.txt.mustache` and an
/// optional `body.html.mustache` in `TEMPLATE_DIR`, or the built-in default text (the design doc's
/// Chinese mail) when no folder is configured.
///
/// Variables: `user_name`, `miss_days`, `last_check_in_date`, `run_date`, `app_name`, and
/// `paused_until` (set only in a mail after a pause: use it as a section). The subject and
/// the text body are rendered without escaping; the HTML body escapes every value (see `render`).
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

        {{user_name}} {{#paused_until}}曾设置外出暂停至 {{paused_until}}，暂停结束后{{/paused_until}}已连续 {{miss_days}} 天未在"{{app_name}}"应用中签到。

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
    ///
    /// The HTML body gets every value HTML-escaped here, one Unicode scalar at a time, and its
    /// template is compiled without Mustache's own escaping: Mustache escapes by `Character`, so a
    /// `"` or `<` followed by a combining mark or a joiner (one grapheme cluster) went through
    /// unescaped and could end an attribute value. `{{{…}}}` is escaped as well.
    public func render(_ variables: TemplateVariables) -> RenderedMail {
        let values = variables.dictionary
        let subjectLine = Self.singleLine(subject.render(values))
        return RenderedMail(subject: subjectLine, text: text.render(values),
                            html: html?.render(values.mapValues(Escaping.html)))
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
    private static func compile(_ source: String, name: String, html: Bool) throws(ConfigurationError) -> MustacheTemplate {
        do {
            return try MustacheTemplate(string: "{{% CONTENT_TYPE: TEXT}}" + source)
        } catch {
            throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(name) is not a valid Mustache template: \(error)")
        }
    }
}
