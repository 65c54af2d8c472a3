import Config
import Foundation
import Mustache
import Rule
import Texts
import Values

extension MailTemplates {
    /// The sets of one language's folder (`LanguageFolders`: built in, or of `TEMPLATE_DIR`): a
    /// kind is there when its subject or its text is, and then both must be.
    static func sets(_ folder: LanguageFolders.Folder) throws(ConfigurationError) -> [DeliveryJob.Kind: Set] {
        var sets: [DeliveryJob.Kind: Set] = [:]
        for kind in DeliveryJob.Kind.mailed {
            let subjectFile = fileName("subject.mustache", kind: kind), textFile = fileName("body.txt.mustache", kind: kind)
            let htmlFile = fileName("body.html.mustache", kind: kind)
            let subject = folder.files[subjectFile], text = folder.files[textFile]
            guard subject != nil || text != nil else { continue }
            guard let subject, let text else {
                throw ConfigurationError(setting: "TEMPLATE_DIR", reason: "\(folder.name): \(subject == nil ? subjectFile : textFile) is missing")
            }
            let html = folder.files[htmlFile]
            func compile(_ source: String, _ file: String) throws(ConfigurationError) -> MustacheTemplate {
                try LanguageFolders.compile(source, name: folder.path(file))
            }
            sets[kind] = Set(subject: try compile(subject, subjectFile), text: try compile(text, textFile),
                             html: try html.map { (source) throws(ConfigurationError) in try compile(source, htmlFile) },
                             usesWording: [subject, text, html ?? ""].contains { $0.contains("_text") })
        }
        return sets
    }
}
