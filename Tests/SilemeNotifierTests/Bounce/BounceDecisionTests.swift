import Bounce
import Foundation
import Store
import Testing
import Values
@testable import Delivery

/// What the reader does with a message (docs/bounces.md), as pure functions: the key that finds
/// the row, and the decision — every case without a mailbox or a database.
@Suite("Bounce decisions")
struct BounceDecisionTests {
    static let tags = BounceTag(address: try! EmailAddress(validating: "bounces@notify.sileme.test"),
                                secret: Secret("b-0123456789abcdef0123456789abcdef"))
    static let row = BounceStore.Delivery(id: 42, userID: "0b6f6a9e-8f8f-4a44-9b1e-6a3f0e0c1d2e", contact: "perm550@gone.example")
    static let messageID = "sileme.20261127.0b6f6a9e-8f8f-4a44-9b1e-6a3f0e0c1d2e.00112233445566aa@notify.sileme.test"

    static func report(_ verdict: BounceReport.Verdict, to: [String] = [], messageID: String? = nil,
                       recipient: String = "perm550@gone.example", status: String = "5.1.1", diagnostic: String? = nil) -> BounceReport {
        BounceReport(verdict: verdict, recipients: [BounceReport.Recipient(finalRecipient: recipient, action: "failed", status: status,
                                                                           diagnostic: diagnostic)],
                     returnedMessageID: messageID, addressedTo: to)
    }

    @Test("the key: a signed tag first, a forged one stops there, else the Message-ID, else none")
    func keys() {
        let tagged = Self.tags.envelopeSender(row: 42)
        #expect(BounceReader.key(of: Self.report(.permanent, to: [tagged], messageID: Self.messageID), tags: Self.tags) == .tag(row: 42))
        #expect(BounceReader.key(of: Self.report(.permanent, to: ["someone@else.example", "<\(tagged.uppercased())>"]), tags: Self.tags)
                == .tag(row: 42))
        let forged = "bounces+1a0000000000000000@notify.sileme.test"
        #expect(BounceReader.key(of: Self.report(.permanent, to: [forged], messageID: Self.messageID), tags: Self.tags)
                == .forged(address: forged))
        #expect(BounceReader.key(of: Self.report(.permanent, to: ["bounces@notify.sileme.test"], messageID: Self.messageID), tags: Self.tags)
                == .messageID(Self.messageID))
        #expect(BounceReader.key(of: Self.report(.permanent, to: ["bounces+x@other.example"]), tags: Self.tags) == .nothing)
    }

    @Test("a permanent report of our mail bounces it; transient and complaint are noted; delivered removed")
    func matched() {
        let key = BounceReader.Key.tag(row: 42)
        #expect(BounceReader.decide(Self.report(.permanent), key: key, delivery: Self.row) == .bounce(Self.row, .noSuchAddress))
        #expect(BounceReader.decide(Self.report(.transient), key: key, delivery: Self.row) == .note(.transient, Self.row))
        #expect(BounceReader.decide(Self.report(.complaint), key: key, delivery: Self.row) == .note(.complaint, Self.row))
        #expect(BounceReader.decide(Self.report(.delivered), key: key, delivery: Self.row) == .remove)
    }

    @Test("a permanent report carries its class: a full mailbox, a spam block or a routing failure is not a dead address")
    func classes() {
        let key = BounceReader.Key.tag(row: 42)
        let cases: [(String, String?, BounceClass)] = [
            ("5.1.1", "smtp; 550 5.1.1 <perm550@gone.example>: Recipient address rejected: User unknown", .noSuchAddress),
            ("5.2.2", "smtp; 552 5.2.2 Mailbox full", .mailbox), ("5.7.1", "smtp; 550 5.7.1 Message rejected as spam", .policy),
            ("5.4.4", "X-Postfix; Host or domain name not found", .routing),
            ("5.0.0", "smtp; 550 Recipient rejected: blocked by policy", .policy), ("5.0.0", "smtp; 550 No such user", .noSuchAddress),
        ]
        for (status, diagnostic, expected) in cases {
            #expect(BounceReader.decide(Self.report(.permanent, status: status, diagnostic: diagnostic), key: key, delivery: Self.row)
                    == .bounce(Self.row, expected), "\(status) \(diagnostic ?? "")")
        }
    }

    @Test("nothing is acted on by guess: unmatched reports and what is not a report are kept aside")
    func keptAside() {
        let key = BounceReader.Key.tag(row: 42)
        #expect(BounceReader.decide(Self.report(.autoReply), key: key, delivery: Self.row) == .setAside(.autoReply))
        #expect(BounceReader.decide(Self.report(.unparsed), key: key, delivery: Self.row) == .setAside(.unparsed))
        #expect(BounceReader.decide(Self.report(.tooLarge), key: .nothing, delivery: nil) == .setAside(.tooLarge))
        #expect(BounceReader.decide(Self.report(.permanent), key: .forged(address: "x"), delivery: nil) == .unmatched(.forgedTag))
        #expect(BounceReader.decide(Self.report(.permanent), key: .nothing, delivery: nil) == .unmatched(.noKey))
        #expect(BounceReader.decide(Self.report(.permanent), key: key, delivery: nil) == .unmatched(.unknownRow))
        var webhook = Self.row
        webhook.channel = "webhook"
        #expect(BounceReader.decide(Self.report(.permanent), key: key, delivery: webhook) == .unmatched(.notMail))
    }

    @Test("found by Message-ID alone, a report must be about the row's own contact")
    func messageIDNeedsTheContact() {
        let key = BounceReader.Key.messageID(Self.messageID)
        #expect(BounceReader.decide(Self.report(.permanent, recipient: "PERM550@gone.example"), key: key, delivery: Self.row) == .bounce(Self.row, .noSuchAddress))
        #expect(BounceReader.decide(Self.report(.permanent, recipient: "victim@elsewhere.example"), key: key, delivery: Self.row)
                == .unmatched(.otherRecipient))
    }

    @Test("a Message-ID of the notifier's form names its user and date; any other names nothing")
    func messageKeys() throws {
        let key = try #require(BounceStore.MessageKey(Self.messageID))
        #expect(key.userID == Self.row.userID && key.date.description == "2026-11-27")
        #expect(BounceStore.MessageKey("sileme.20261127.00112233445566aa@notify.sileme.test") == nil)
        #expect(BounceStore.MessageKey("7k3mq2xw9d8f1a.alert@notify.sileme.test") == nil)
        #expect(BounceStore.MessageKey("sileme.20261399.0b6f6a9e-8f8f-4a44-9b1e-6a3f0e0c1d2e.00112233445566aa@x") == nil)
    }

    @Test("the real Postfix report with its tag: bounced; the same with a forged tag: kept aside")
    func postfixReport() throws {
        let raw = String(decoding: try BounceCorpus.bytes("postfix-permanent-550.eml"), as: UTF8.self)
        let tagged = raw.replacingOccurrences(of: "bounces+7k3mq2xw9d8f1a@notify.sileme.test", with: Self.tags.envelopeSender(row: 42))
        let report = BounceReport.read(Array(tagged.utf8))
        let key = BounceReader.key(of: report, tags: Self.tags)
        #expect(key == .tag(row: 42))
        #expect(BounceReader.decide(report, key: key, delivery: Self.row) == .bounce(Self.row, .noSuchAddress))
        let forged = BounceReport.read(Array(raw.utf8))
        #expect(BounceReader.decide(forged, key: BounceReader.key(of: forged, tags: Self.tags), delivery: nil) == .unmatched(.forgedTag))
    }

    @Test("the diagnostic in the journal masks the contact's address; a fingerprint is the hex SHA-256")
    func journalText() {
        #expect(BounceReader.masked("550 5.1.1 <Perm550@gone.example>: rejected", contact: "perm550@gone.example")
                == "550 5.1.1 <p***@gone.example>: rejected")
        #expect(BounceMailboxes.fingerprint(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(BounceReader.domain("a@Gone.Example") == "gone.example")
    }
}
