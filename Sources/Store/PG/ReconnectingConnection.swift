import Config
import Foundation
import Values

/// A database connection that outlives a PostgreSQL restart or a dropped connection: when a
/// statement fails because the connection broke (`DatabaseError.Kind.unreachable`), it connects
/// again — waiting 0.25 s, doubling up to 5 s, for at most `patience` seconds from the first
/// failure — and runs the work again on the new connection.
///
/// Only for work that may safely run twice: the server may have committed the first attempt
/// before the connection broke. The run's statements are written so (a claim retried after its
/// commit takes its own rows over again with the same `Message-ID`; recording an outcome twice
/// changes nothing the second time). Statement errors (a timeout, a constraint) are not retried.
/// Not `Sendable`, like `PGConnection`: one thread uses it.
package final class ReconnectingConnection {
    private let conninfo: Secret
    private let schema: DatabaseSchema
    private let applicationName: String
    private let patience: TimeInterval
    private let onRetry: (DatabaseError, TimeInterval) -> Void
    private let onWait: () -> Void
    private let stop: StopSignal
    /// Where the sessions come from and go back to (the daemon's); nil: opened and closed here.
    private let keeper: SessionKeeper?
    private var current: PGConnection?

    /// Connects now (throwing if the server cannot be reached: the first connection is not
    /// retried). `onRetry` hears of each broken connection with the delay before the next attempt;
    /// `onWait` is called at least once a second while waiting (the daemon's watchdog). A raised
    /// `stop` ends the waiting at once: the last error is thrown.
    /// With `keeper`, the sessions come from it and the last one goes back to it when this
    /// connection is done with.
    package init(_ conninfo: Secret, schema: DatabaseSchema, applicationName: String = "sileme-notifier", patience: TimeInterval,
         onRetry: @escaping (DatabaseError, TimeInterval) -> Void = { _, _ in }, onWait: @escaping () -> Void = {},
         stop: StopSignal = StopSignal(), keeper: SessionKeeper? = nil) throws {
        self.conninfo = conninfo
        self.schema = schema
        self.applicationName = applicationName
        self.patience = patience
        self.onRetry = onRetry
        self.onWait = onWait
        self.stop = stop
        self.keeper = keeper
        current = try Self.connect(conninfo, schema: schema, applicationName: applicationName, keeper: keeper)
    }

    deinit {
        if let keeper, let current { keeper.keep(current) }
    }

    private static func connect(_ conninfo: Secret, schema: DatabaseSchema, applicationName: String,
                                keeper: SessionKeeper?) throws(DatabaseError) -> PGConnection {
        if let keeper { return try keeper.take() }
        return try PGConnection(conninfo, schema: schema, applicationName: applicationName)
    }

    /// Runs `body` on the connection, reconnecting and running it again after a broken connection
    /// until `patience` is used up; then the last error is thrown. With `retrying: false` (work
    /// that must not run twice) the error is thrown at once, and the next call reconnects.
    package func perform<T>(retrying: Bool = true, _ body: (PGConnection) throws -> T) throws -> T {
        var deadline: Date?
        var delay: TimeInterval = 0.25
        while true {
            do {
                let connection: PGConnection
                if let current { connection = current } else {
                    connection = try Self.connect(conninfo, schema: schema, applicationName: applicationName, keeper: keeper)
                    current = connection
                }
                return try body(connection)
            } catch let error as DatabaseError where error.kind == .unreachable {
                current = nil
                guard retrying else { throw error }
                let limit = deadline ?? Date().addingTimeInterval(patience)
                deadline = limit
                let wait = min(delay, limit.timeIntervalSinceNow)
                guard wait > 0 else { throw error }
                onRetry(error, wait)
                guard stop.sleep(wait, alive: onWait) else {
                    throw error
                }
                delay = min(5, delay * 2)
            }
        }
    }
}
