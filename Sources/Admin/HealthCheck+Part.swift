import Config
import Mail
import Store
import Values

extension HealthCheck {
    /// One part of `check`: whether the configuration asks for it, what it reads from the
    /// database, and its lines (each with the exit status its failure means). The parts are
    /// values, named after their lines (`Part.webhook`), each in the file of its concern, and
    /// listed once, in `HealthCheck.parts`.
    struct Part: Sendable {
        /// A line of the report.
        typealias Finding = HealthCheck.Finding
        /// What a part reads over the check's database session (the schema current): kept in the
        /// context for its lines, or lines that come among the database's. An error it throws
        /// (one it did not make a line of its own, `HealthCheck.reading`) is the database's
        /// failure, and the parts after it read nothing.
        typealias Read = @Sendable (PGConnection, inout Context) throws -> [Finding]

        /// Whether the configuration asks for the part (default: always).
        let condition: @Sendable (NotifierConfiguration) -> Bool
        /// What it reads while the `database` part holds the session (default: nothing).
        let read: Read?
        /// Its lines, in the list's order, from the configuration, the servers it reaches and what
        /// it read (default: none).
        let lines: @Sendable (inout Context) -> [Finding]

        /// Creates a part.
        init(when condition: @escaping @Sendable (NotifierConfiguration) -> Bool = { _ in true },
             read: Read? = nil, lines: @escaping @Sendable (inout Context) -> [Finding] = { _ in [] }) {
            self.condition = condition
            self.read = read
            self.lines = lines
        }

        /// Whether the part has anything to check under `configuration`.
        func applies(to configuration: NotifierConfiguration) -> Bool { condition(configuration) }
    }

    /// What the parts of one check share: the configuration, the parts walked (the `database`
    /// part reads for them), and what a part read or loaded for a later line.
    struct Context {
        /// The configuration checked.
        let configuration: NotifierConfiguration
        /// The parts walked.
        let parts: [Part]
        /// The templates, when they loaded (the `languages asked for` line).
        var templates: MailTemplates?
        /// The acknowledgements of the last 30 days, counted (the page's line).
        var acknowledgements: String?
        /// The bounce reader's record (nil: not read, the database unusable).
        var bounceRecord: Result<BounceStore.MailboxRecord?, any Error>?
        /// The canaries' figures by relay (nil: not read).
        var canaryFigures: Result<[CanaryStore.Figures], any Error>?
        /// The escalated streaks' figures (nil: not read).
        var escalationFigures: Result<EscalationFigures, any Error>?

        /// The context of a check of `configuration` walking `parts`.
        init(configuration: NotifierConfiguration, parts: [Part]) {
            self.configuration = configuration
            self.parts = parts
        }
    }

    /// The line a database read makes, or the line of its `DatabaseError` under `subject` — the
    /// part's own failure; any other error is the database's.
    static func reading(_ subject: String, failure: ExitStatus, _ read: () throws -> [Finding]) throws -> [Finding] {
        do {
            return try read()
        } catch let error as DatabaseError {
            return [Finding(subject: subject, ok: false, detail: error.description, failure: failure)]
        }
    }
}
