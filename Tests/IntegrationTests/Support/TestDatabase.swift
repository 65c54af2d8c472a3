import Foundation
import Values
@testable import Store

/// A fresh PostgreSQL database for one test, migrated with the shipped migrations, with helpers
/// to build a scenario (users, check-ins) and to read back what the notifier wrote — on the
/// shared test server, or on a test's own `PostgresCluster`. Its connection reconnects after the
/// server was restarted.
final class TestDatabase {
    let name: String
    let url: String
    private(set) var connection: PGConnection
    private let environment: TestEnvironment
    private let adminURL: String

    /// Creates the database (on `cluster`, else on the shared server); `migrate: false` leaves it empty.
    init(migrate: Bool = true, cluster: PostgresCluster? = nil) throws {
        environment = try TestEnvironment.require()
        name = "sn_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        adminURL = cluster?.url() ?? environment.adminDatabaseURL
        let admin = try PGConnection(Secret(adminURL), schema: .standard)
        try admin.execute("CREATE DATABASE \(name)")
        url = "postgresql://postgres@127.0.0.1:\(cluster.map { String($0.port) } ?? environment.pgPort)/\(name)"
        connection = try PGConnection(Secret(url), schema: .standard)
        if migrate { try Migrator(directory: Self.migrationsDirectory).migrate(connection) }
    }

    /// Runs `sql` on the connection, reconnecting once if the server was restarted meanwhile.
    @discardableResult
    private func execute(_ sql: String, _ parameters: [String?]) throws -> PGResult {
        do { return try connection.execute(sql, parameters) } catch where error.kind == .unreachable {
            connection = try PGConnection(Secret(url), schema: .standard)
            return try connection.execute(sql, parameters)
        }
    }

    static let migrationsDirectory = TestEnvironment.root.appendingPathComponent("Sources/Store/Migrations").path

    /// Runs `sql` and returns every row as text values.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let result = try execute(sql, parameters)
        let columns = result.columnCount
        return result.rows.map { row in (0..<columns).map { row.string($0) } }
    }

    /// Inserts a user and returns its id.
    @discardableResult
    func addUser(name: String?, email: String?, checkIns: [String] = []) throws -> String {
        let id = UUID().uuidString.lowercased()
        try execute("INSERT INTO users (id, name, emergency_email) VALUES ($1, $2, $3)", [id, name, email])
        for day in checkIns { try checkIn(id, day) }
        return id
    }

    /// Creates the design doc's tables as the app created them — no claim key, no delivery state,
    /// no summary — to test migrations on an existing database (`only`: a subset, in order).
    func createDesignDocTables(only: [String] = ["users", "check_ins", "notification_logs"]) throws {
        let ddl = [
            "users": """
                CREATE TABLE users (id UUID PRIMARY KEY, name VARCHAR(100) NOT NULL, emergency_email VARCHAR(255) NOT NULL,
                                    created_at TIMESTAMP DEFAULT NOW(), updated_at TIMESTAMP DEFAULT NOW())
                """,
            "check_ins": """
                CREATE TABLE check_ins (id BIGSERIAL PRIMARY KEY, user_id UUID NOT NULL REFERENCES users(id),
                                        check_in_date DATE NOT NULL, check_in_time TIMESTAMP DEFAULT NOW(),
                                        created_at TIMESTAMP DEFAULT NOW(), UNIQUE (user_id, check_in_date))
                """,
            "notification_logs": """
                CREATE TABLE notification_logs (id BIGSERIAL PRIMARY KEY, user_id UUID NOT NULL REFERENCES users(id),
                                                notification_date DATE NOT NULL, email_sent BOOLEAN DEFAULT FALSE,
                                                consecutive_miss_days INTEGER NOT NULL, created_at TIMESTAMP DEFAULT NOW())
                """,
        ]
        for table in only { try connection.executeScript(ddl[table]!) }
    }

    /// Inserts `count` users (`user1@domain` …) whose only check-in is `lastCheckIn`, in one statement.
    func addUsers(count: Int, domain: String, lastCheckIn: String) throws {
        try execute("""
            WITH u AS (INSERT INTO users (name, emergency_email)
                       SELECT 'User ' || g, 'user' || g || '@' || $2 FROM generate_series(1, $1::int) g RETURNING id)
            INSERT INTO check_ins (user_id, check_in_date) SELECT id, $3::date FROM u
            """, [String(count), domain, lastCheckIn])
    }

    /// Folds the queued check-ins into the summary, as the daemon does every second (before a
    /// dump that a reader must leave unchanged: the reader then has nothing to fold).
    func foldCheckIns() throws {
        try CheckInQueue.fold(connection)
    }

    /// Records a check-in of `user` on `day`.
    func checkIn(_ user: String, _ day: String) throws {
        try execute("INSERT INTO check_ins (user_id, check_in_date) VALUES ($1, $2)", [user, day])
    }

    /// The `notification_logs` rows of `user`: (date, status, email_sent, attempts, last_error, message_id, m).
    func logs(_ user: String) throws -> [NotificationLogRow] {
        try query("""
            SELECT notification_date::text, status, email_sent::text, attempts::text, last_error, message_id,
                   consecutive_miss_days::text
            FROM notification_logs WHERE user_id = $1 ORDER BY notification_date
            """, [user]).map {
                NotificationLogRow(date: $0[0]!, status: $0[1], emailSent: $0[2] == "true", attempts: Int($0[3]!)!,
                                   lastError: $0[4], messageID: $0[5], missedDays: Int($0[6]!)!)
            }
    }

    /// A full dump of the database (schema and data), to prove a run changed nothing.
    func dump() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(environment.pgBin)/pg_dump")
        process.arguments = ["--no-owner", "--data-only", "--inserts", "--no-comments", url]
        let schema = Process()
        schema.executableURL = process.executableURL
        schema.arguments = ["--no-owner", "--schema-only", url]
        return try [process, schema].map { p in
            let pipe = Pipe()
            p.standardOutput = pipe
            try p.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw TestFailure("pg_dump failed") }
            // pg_dump 15.14+ brackets its output with `\restrict KEY` lines whose key is random.
            return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict") }.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    deinit {
        // Best effort: databases of a failed run are dropped with the cluster anyway.
        if let admin = try? PGConnection(Secret(adminURL), schema: .standard) {
            _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }
}

/// One `notification_logs` row as the tests read it.
struct NotificationLogRow: Equatable {
    let date: String
    let status: String?
    let emailSent: Bool
    let attempts: Int
    let lastError: String?
    let messageID: String?
    let missedDays: Int
}
