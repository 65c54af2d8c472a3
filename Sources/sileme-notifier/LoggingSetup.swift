import Foundation
import Logging
import Systemd

/// Routes the run's events: to journald when it runs (the audit trail), and for a run started by
/// hand also a readable summary (notices, warnings, errors) on standard error; with no journal,
/// every event goes to standard error.
enum LoggingSetup {
    static func bootstrap(interactive: Bool) -> Logger {
        let journal = JournalLogHandler.journalAvailable
        // systemd sets JOURNAL_STREAM when standard error already goes to the journal.
        let stderrIsJournal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { label in
            guard journal else { return StderrLogHandler(label: label) }
            guard interactive, !stderrIsJournal else { return JournalLogHandler(label: label) }
            var terminal = StderrLogHandler(label: label, fields: false)
            terminal.logLevel = .notice
            return MultiplexLogHandler([JournalLogHandler(label: label), terminal])
        }
        return Logger(label: "sileme-notifier")
    }
}
