/// A run that stopped (SIGTERM) before it handled every due mail; the rest stay due and the
/// next run (the daemon's catch-up after restart) takes them.
package struct RunInterrupted: Error, CustomStringConvertible {
    /// Due mails not attempted.
    package let remaining: Int

    package var description: String { "interrupted by shutdown with \(remaining) due mails not yet attempted" }
}
