import Foundation
import Testing
@testable import Values
@testable import Store

/// TLS to PostgreSQL with `sslmode=verify-full` (issue 6): the server's certificate is checked
/// against the given CA and host name; a certificate from another CA is refused with exit 69.
@Suite("PostgreSQL over verified TLS", .enabled(if: TestEnvironment.enabled))
struct PostgresTLSIntegrationTests {
    @Test("sslmode=verify-full with the right CA connects over TLS; with another CA it is refused")
    func verifyFull() throws {
        let env = try TestEnvironment.require()
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try db.addUser(name: "TLS", email: mail.address("pgtls"), checkIns: ["2026-01-10"])
        let url = "postgresql://postgres@localhost:\(env.pgPort)/\(db.name)?sslmode=verify-full&sslrootcert=\(env.caFile)"
        let connection = try PGConnection(Secret(url), schema: .standard)
        #expect(try connection.execute("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()").rows.first?.string(0) == "true")
        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"],
                                          environment: try NotifierProcess.environment(database: db, ["DATABASE_URL": url]))
        #expect(run.status == 0)
        #expect(try db.logs(user).map(\.emailSent) == [true])

        // Another self-signed CA: the server's certificate does not verify.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                             "-keyout", dir.appendingPathComponent("k.pem").path, "-out", dir.appendingPathComponent("c.pem").path]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        let wrong = url.replacingOccurrences(of: env.caFile, with: dir.appendingPathComponent("c.pem").path)
        let refused = try NotifierProcess.run(["--run-now", "--dry-run", "--date", "2026-01-13"],
                                              environment: try NotifierProcess.environment(database: db, ["DATABASE_URL": wrong]))
        #expect(refused.status == 69)
        #expect(refused.stderr.contains("certificate verify failed"))
    }
}
