import Foundation
@testable import Config
@testable import Values

extension NotifierConfiguration {
    /// A configuration that runs on `database` and sends over the test mail server's STARTTLS
    /// port with `connections` SMTP connections (introductions off: the tests count alerts).
    static func sendingToTestServer(database: TestDatabase, connections: Int) throws -> NotifierConfiguration {
        let env = try TestEnvironment.require()
        var configuration = NotifierConfiguration()
        configuration.databaseURL = Secret(database.url)
        configuration.fromEmail = "noreply@sileme.app"
        configuration.introduceContacts = false
        configuration.smtp.host = "localhost"
        configuration.smtp.port = Int(env.starttlsPort)!
        configuration.smtp.user = env.smtpUser
        configuration.smtp.password = Secret(env.smtpPassword)
        configuration.smtp.caFile = env.caFile
        configuration.smtp.connections = connections
        return configuration
    }
}
