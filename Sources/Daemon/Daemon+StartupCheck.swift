import Config
import Foundation
import Mail
import Store
import Texts
import Values

extension Daemon {
    /// What must hold before the daemon says READY: the configuration can send, the templates
    /// render, the database answers and its schema is current. Nil when it holds; the exit status
    /// otherwise (`.success` when a stop came while waiting for the database). The page's texts
    /// it loaded are the daemon's (`pageTexts`).
    func startupCheck() -> ExitStatus? {
        do {
            let texts = try Self.validate(configuration)
            pageTexts.withLock { $0 = texts }
        } catch {
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

    /// The mail templates and the page's texts load (else the configuration is refused, at start
    /// and at a reload alike); the page's texts, whose default language is the one the mail
    /// templates settled on.
    static func validate(_ configuration: NotifierConfiguration) throws -> TextTable {
        let mailLanguage = try MailComposer(sending: configuration.mail).templates.defaultLanguage
        return try TextTable(file: TextTable.page, directory: configuration.mail.templateDirectory, defaultLanguage: mailLanguage)
    }
}
