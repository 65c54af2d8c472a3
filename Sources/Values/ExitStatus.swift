/// The process exit codes of docs/interfaces.md (sysexits.h values).
public enum ExitStatus: Int32, Sendable {
    /// Everything done.
    case success = 0
    /// Anything else went wrong.
    case failure = 1
    /// An invalid command-line argument (`EX_USAGE`).
    case usage = 64
    /// The database or the mail server is unreachable (`EX_UNAVAILABLE`).
    case unavailable = 69
    /// Some mails failed and will be retried (`EX_TEMPFAIL`).
    case tempFailure = 75
    /// A configuration error (`EX_CONFIG`).
    case configuration = 78
}
