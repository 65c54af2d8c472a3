import Foundation

/// The real servers started by `scripts/testenv/testenv.sh` (PostgreSQL, three SMTP servers,
/// journald), as its `env.sh` describes them.
///
/// The integration tests run when these variables are present, and also when
/// `SILEME_REQUIRE_SERVERS=1` is set without them (then they fail, loudly) — so `scripts/test.sh`
/// and CI can never pass by silently skipping them.
struct TestEnvironment: Sendable {
    let adminDatabaseURL: String
    let pgBin: String
    let pgPort: String
    let smtpHost: String
    let starttlsPort: String
    let tlsPort: String
    let plainPort: String
    let smtpUser: String
    let smtpPassword: String
    let caFile: String
    let maildir: String
    let journal: Bool

    static let current: TestEnvironment? = {
        let env = ProcessInfo.processInfo.environment
        guard let db = env["SILEME_TEST_DATABASE_URL"], let maildir = env["SILEME_TEST_MAILDIR"] else { return nil }
        return TestEnvironment(
            adminDatabaseURL: db, pgBin: env["SILEME_TEST_PG_BIN"] ?? "/usr/lib/postgresql/15/bin",
            pgPort: env["SILEME_TEST_PG_PORT"] ?? "5432", smtpHost: env["SILEME_TEST_SMTP_HOST"] ?? "127.0.0.1",
            starttlsPort: env["SILEME_TEST_SMTP_STARTTLS_PORT"] ?? "", tlsPort: env["SILEME_TEST_SMTP_TLS_PORT"] ?? "",
            plainPort: env["SILEME_TEST_SMTP_PLAIN_PORT"] ?? "", smtpUser: env["SILEME_TEST_SMTP_USER"] ?? "",
            smtpPassword: env["SILEME_TEST_SMTP_PASSWORD"] ?? "", caFile: env["SILEME_TEST_SMTP_CA"] ?? "",
            maildir: maildir, journal: env["SILEME_TEST_JOURNAL"] == "1")
    }()

    /// Whether the integration suites run (see the type's documentation).
    static let enabled: Bool = current != nil || ProcessInfo.processInfo.environment["SILEME_REQUIRE_SERVERS"] == "1"

    /// The environment, or a failure explaining how to start the servers.
    static func require() throws -> TestEnvironment {
        guard let current else {
            throw TestFailure("SILEME_REQUIRE_SERVERS=1 but no test servers: run `scripts/test.sh` (or source testenv's env.sh)")
        }
        return current
    }

    /// The repository's root folder.
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}

/// A failure of the test harness itself, with a message.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
