/// The process exit codes of docs/interfaces.md (sysexits.h values).
package enum ExitStatus: Int32, Sendable {
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

    /// The status of two runs one after the other (one instant's runs): the first that is not
    /// `success`, so the exit says what went wrong first.
    package func then(_ next: ExitStatus) -> ExitStatus { self == .success ? next : self }
}
