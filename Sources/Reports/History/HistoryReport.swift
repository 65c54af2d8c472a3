import Config
import Foundation
import Store
import Values

/// The history report (`sileme-notifier report`): what the notifier did over a period — per day,
/// or for one user — read in one read-only transaction with a single snapshot (so the totals and
/// the listed rows agree), and handed to a `HistorySink` as it is read.
package struct HistoryReport: Sendable {
    /// The configuration (database, service zone, rule).
    package let configuration: NotifierConfiguration
    /// What to report.
    package let request: HistoryRequest

    /// Creates the report for `request`.
    package init(configuration: NotifierConfiguration, request: HistoryRequest) {
        self.configuration = configuration
        self.request = request
    }

    /// Connects to the database and writes the report to `sink`; returns the period's aggregates.
    @discardableResult
    package func write(into sink: any HistorySink) throws -> HistoryOverview {
        try write(PGConnection(configuration.database, \.readURL), into: sink)
    }

    /// Writes the report to `sink` using `db`. Throws `HistoryError.unknownUser` for a `--user`
    /// that does not exist, `HistoryError.schemaNotCurrent` when the schema lacks what it reads.
    @discardableResult
    package func write(_ db: PGConnection, into sink: any HistorySink) throws -> HistoryOverview {
        let store = HistoryStore(redaction: HistoryRedaction(fullEmails: request.fullEmails),
                                 claims: ClaimSQL(leaseSeconds: configuration.claimLeaseSeconds))
        do {
            return try db.transaction(readOnly: true) {
                // Every statement of the report sees the same snapshot.
                try db.execute(SQLStatement("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
                var user: UserProfile?
                if let id = request.userID {
                    guard let profile = try store.user(db, id: id) else { throw HistoryError.unknownUser(id) }
                    user = profile
                }
                // --zone: the users counted in that zone (their slots, or the service's).
                let slots = try request.zone.map { try SlotSQL.slots(db, service: configuration.schedule).keys(countedIn: $0) }
                let overview = try store.overview(db, request: request, slots: slots, intakeGuard: configuration.intakeGuard,
                                                  today: CalendarDate(Date(), in: configuration.timeZone),
                                                  timeZone: configuration.timeZone)
                let header = HistoryHeader(request: request, timeZone: configuration.timeZone,
                                           thresholdDays: configuration.rule.thresholdDays,
                                           catchUpDays: configuration.rule.catchUpDays, user: user)
                try sink.begin(header, overview: overview)
                if let user {
                    try sink.beginSection(.streaks)
                    try store.streamStreaks(db, userID: user.userID, request: request,
                                            rule: configuration.rule) { try sink.streak($0) }
                    try sink.endSection(.streaks)
                    try sink.beginSection(.notifications)
                    try store.streamNotifications(db, userID: user.userID, request: request) { try sink.notification($0) }
                    try sink.endSection(.notifications)
                } else {
                    try sink.beginSection(.runs)
                    try store.streamRuns(db, request: request, slots: slots) { try sink.run($0) }
                    try sink.endSection(.runs)
                    try sink.beginSection(.problems)
                    try store.streamProblems(db, request: request, slots: slots) { try sink.notification($0) }
                    try sink.endSection(.problems)
                }
                try sink.end()
                return overview
            }
        } catch let error as DatabaseError where error.sqlState == "42P01" || error.sqlState == "42703" {
            // undefined_table / undefined_column: the notifier's migrations were not applied.
            throw HistoryError.schemaNotCurrent(detail: error.message)
        }
    }
}
