import Foundation
import Testing
import TestSupport
@testable import Config

/// `SMTP_HELO_NAME`: the EHLO name, its default and what the loader accepts.
@Suite("SMTP_HELO_NAME")
struct HeloNameTests {
    @Test("defaults to the machine's fully qualified name, as hostname -f finds it")
    func defaultIsFullyQualified() throws {
        let configuration = try ConfigurationLoader(environment: [:], filePath: nil).load()
        #expect(configuration.smtp.heloName == HostName.fullyQualified)
        #expect(HostName.isDomain(configuration.smtp.heloName))
        let expected = try HostNameProbe.fullyQualified()
        #expect(configuration.smtp.heloName == expected)
    }

    @Test("a domain or an address literal is taken as it is", arguments: [
        "mail.example.com", "notifier-1.sileme.app", "localhost", "[192.0.2.1]", "[IPv6:2001:db8::1]",
    ])
    func accepted(_ name: String) throws {
        let configuration = try ConfigurationLoader(environment: ["SMTP_HELO_NAME": name], filePath: nil).load()
        #expect(configuration.smtp.heloName == name)
    }

    @Test("libcurl greets with the URL's path: the name, percent-encoded where a URL needs it")
    func transferURL() {
        var smtp = SMTPSettings()
        smtp.host = "mail.example.com"
        smtp.heloName = "notifier.example.org"
        #expect(smtp.transferURL == "smtp://mail.example.com:587/notifier.example.org")
        #expect(smtp.url == "smtp://mail.example.com:587")
        smtp.heloName = "[IPv6:2001:db8::1]"
        smtp.tls = .tls
        smtp.port = 465
        #expect(smtp.transferURL == "smtps://mail.example.com:465/%5BIPv6:2001:db8::1%5D")
    }
}
