import Store

/// Receives a report as it is produced, row by row, so that a large report is streamed rather
/// than held in memory.
package protocol ReportSink: AnyObject {
    /// Called once before any row.
    func begin(_ header: ReportHeader) throws
    /// Called for each listed user, in query order.
    func row(_ row: ReportRow) throws
    /// Called once after the rows with the other messages a run would send now (all-clears,
    /// follow-ups, introductions, unfinished alerts, and with the webhook on the new alerts'
    /// events), in the order a run sends them.
    func lifecycle(_ messages: LifecycleMessages) throws
    /// Called once at the end with the counts of every decision.
    func end(_ counts: RunTally) throws
}

extension ReportSink {
    /// By default a report lists users only.
    package func lifecycle(_ messages: LifecycleMessages) throws {}
}
