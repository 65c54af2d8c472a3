import Config
import Foundation
import Mail
import Store
import Values

extension Daemon {
    /// What must hold before the daemon says READY: the configuration can send, the templates
    /// render, the database answers and its schema is current. Nil when it holds; the exit status
    /// otherwise (`.success` when a stop came while waiting for the database). `mailLanguage`:
    /// the templates' default language, as this check loaded them (the page's last resort).
    func startupCheck(mailLanguage: inout LanguageTag?) -> ExitStatus? {
        do { mailLanguage = try Self.validate(configuration) } catch {
            logger.critical("\(error)")
            return .configuration
        }
        var delay: TimeInterval = 1
        while true {
            do {
                let db = try PGConnection(configuration.database)
                let pending = try Migrator(directory: configuration.migrationsDirectory).pending(db)
                guard pending.isEmpty else {
                    logger.critical("the database schema is not current (pending: \(pending.joined(separator: ", "))); run `sileme-notifier migrate`")
                    return .configuration
                }
                try RowSecurity.verify(db)
                try CheckInTriggers.verify(db)
                return nil
            } catch let error as DatabaseError where error.kind == .unreachable && delay < 40 && !stopRequested {
                logger.warning("database unreachable at start: \(error); retrying in \(Int(delay)) s")
                systemd.status("waiting for the database")
                guard stop.sleep(delay) else { return .success }  // stopped while waiting: a clean exit
                delay *= 2
            } catch let error as DatabaseError {
                logger.critical("\(error)")
                return error.kind == .unreachable ? .unavailable : .failure
            } catch {
                logger.critical("\(error)")
                return .configuration
            }
        }
    }

    /// The templates load and render (else the configuration is refused, at start and at a
    /// reload alike); their default language.
    @discardableResult
    static func validate(_ configuration: NotifierConfiguration) throws -> LanguageTag {
        try MailComposer(sending: configuration.mail).templates.defaultLanguage
    }
}
