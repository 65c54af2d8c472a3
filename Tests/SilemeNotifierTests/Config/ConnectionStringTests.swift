import Testing
@testable import Values
@testable import Config

/// `DATABASE_URL` checked at start (exit 78), and libpq's words about it without the password.
@Suite("Connection strings")
struct ConnectionStringTests {
    @Test("valid URIs and key=value strings pass", arguments: [
        "postgresql://u:secret@db.example:5432/sileme?sslmode=verify-full", "host=/run/postgresql dbname=sileme",
        "postgresql:///sileme", "host=a,b port=5432,5433", "",
    ])
    func valid(_ conninfo: String) {
        #expect(ConnectionString.syntaxProblem(Secret(conninfo)) == nil)
    }

    @Test("malformed ones are refused in libpq's words, never quoting the password", arguments: [
        "postgresql://u:Secret-42x@[::1/db", "postgresql://u:Secret-42x@h/db?nosuchoption=1", "host=h port=notaport password=Secret-42x",
        "postgresql://u:Secret-42x@h:99999/db", "host=h password='Secret-42x", "postgresql://u:Secret%zz42x@h/db",
    ])
    func malformed(_ conninfo: String) throws {
        let problem = try #require(ConnectionString.syntaxProblem(Secret(conninfo)))
        #expect(!problem.contains("Secret"), "\(problem)")
        #expect(!problem.contains("42x"), "\(problem)")
        #expect(!problem.isEmpty)
    }
}
