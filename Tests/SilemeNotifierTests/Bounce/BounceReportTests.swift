import Bounce
import Foundation
import Testing
import Values

/// The report reader against every message of the real corpus: each file states its
/// kind, the recipient and status that decide it, and the returned message's `Message-ID`. The
/// expectations were written from an independent reading of each file with Python's `email`
/// package, not from this reader's output.
@Suite("Bounce reports: the real corpus")
struct BounceReportTests {
    /// File, verdict, deciding recipient, its status, returned Message-ID, recipient blocks.
    typealias Expectation = (file: String, verdict: BounceReport.Verdict, recipient: String?, status: String?, messageID: String?, blocks: Int)

    static let expectations: [Expectation] = [
        ("flufl-dsn_02.eml", .transient, "/S=zzzzz/OU=example/PRMD=UK.AC/ADMD= /C=GB/", "4.4.7", "LNBBLJKPBEHFEDALKOLCMEEDIFAA.tim.one@home.com", 1),
        ("flufl-dsn_05.eml", .transient, "userx@example.cz", "4.4.1", nil, 1),
        ("flufl-dsn_12.eml", .permanent, "userx@example.jp", "5.1.1", nil, 1),
        ("flufl-dsn_14.eml", .unparsed, "userx@example.com.dk", nil, "mailman.2721.1143482819.1567.gpc-talk@grizz.org", 1),
        ("flufl-dsn_15.eml", .unparsed, nil, nil, "7CvPg3IK9000149b3@cccclyna01.ccc.coopcam.com", 0),
        ("flufl-dsn_17.eml", .transient, "xxx@example.fi", "4.3.0", "mailman.150418.1209869464.31038.pray4-team@strategicnetwork.org", 1),
        ("flufl-microsoft_01.eml", .unparsed, nil, nil, nil, 0),
        ("flufl-postfix_01.eml", .unparsed, nil, nil, nil, 0),
        ("flufl-yahoo_01.eml", .unparsed, nil, nil, nil, 0),
        ("postfix-delayed-451.eml", .transient, "temp451always@slow.example", "4.3.0", "9x1c5r8m2k7q3e.alert@notify.sileme.test", 1),
        ("postfix-permanent-550.eml", .permanent, "perm550@gone.example", "5.1.1", "7k3mq2xw9d8f1a.alert@notify.sileme.test", 1),
        ("postfix-permanent-headers.eml", .permanent, "perm550@gone.example", "5.1.1", "4hb2n6t0c1p9vz.alert@notify.sileme.test", 1),
        ("sisimai-arf-01.eml", .complaint, nil, nil, nil, 0),
        ("sisimai-arf-19.eml", .complaint, nil, nil, "000000000.2222222.0000000000002@example.net", 0),
        ("sisimai-crlf-lhost-office365-01.eml", .unparsed, nil, nil, nil, 0),
        ("sisimai-crlf-lhost-postfix-01.eml", .permanent, "r@p351355.pool.example.ne.jp", "5.1.1", nil, 1),
        ("sisimai-is-not-bounce-01.eml", .unparsed, nil, nil, nil, 0),
        ("sisimai-is-not-bounce-02.eml", .unparsed, nil, nil, "E5CEC0EA-2569-48E3-A47E-B01E78F1A409@example.com", 0),
        ("sisimai-lhost-amazonses-02.eml", .permanent, "this-local-part-does-not-exist-on-the-server@docomo.ne.jp", "5.0.0",
         "00000132e188591e-2882d710-aacc-49e9-bfac-5400b02ffb9b-000000@email.amazonses.com", 1),
        ("sisimai-lhost-amazonses-05.eml", .permanent, "bounce@simulator.amazonses.com", "5.1.1",
         "01010157b3c0c026-110cf920-4be1-4c36-87c0-1f48d0cc6639-000000@us-west-2.amazonses.com", 1),
        ("sisimai-lhost-exim-01.eml", .unparsed, nil, nil, nil, 0),
        ("sisimai-lhost-exim-29.eml", .permanent, "kijitora@example.co.jp", "5.0.0", "EEEEEEE-222222-00@example.co.jp", 1),
        ("sisimai-lhost-gmail-01.eml", .unparsed, nil, nil, nil, 0),
        ("sisimai-lhost-office365-05.eml", .permanent, "kijitora@example.jp", "5.1.8",
         "SLXP216MB0381016D56DE89DBC2139287A96B0@SLXP216MB0381.KORP216.PROD.OUTLOOK.COM", 1),
        ("sisimai-lhost-outlook-02.eml", .permanent, "kijitora@example.jp", "5.1.1", "BLU436-SMTP6688F46CFBFB4294F252B1BA770@phx.gbl", 1),
        ("sisimai-lhost-outlook-04.eml", .permanent, "sabineko@example.co.jp", "5.1.1", "BLU436-SMTP695D62048105F50EF3A1B8BA770@phx.gbl", 2),
        ("sisimai-lhost-qmail-01.eml", .unparsed, nil, nil, nil, 0),
        ("sisimai-lhost-sendmail-02.eml", .permanent, "userunknown@example.org", "5.1.1", "C6625D0F-A302-4980-BEAB-2AF883EA0116@example.jp", 2),
        ("sisimai-lhost-yahoo-01.eml", .unparsed, nil, nil, nil, 0),
        ("sisimai-rfc3464-09.eml", .transient, "kijitora-cat@mx4.gr3.example.jp", "4.3.0", "00000000000000000000000000000000000000000@example.org", 1),
        ("sisimai-rfc3464-28.eml", .unparsed, "kijitora@neko.example.jp", "2.1.5", "20151025071802.22CC00222233@neko-222-2222.vs.example.ne.jp", 1),
        ("sisimai-rfc3464-42.eml", .permanent, "jane.doe@some-domain.net", "5.0.0", nil, 1),
        ("sisimai-rfc3834-01.eml", .autoReply, nil, nil, nil, 0),
        ("sisimai-rfc3834-02.eml", .autoReply, nil, nil, nil, 0),
        ("sisimai-rfc3834-06.eml", .autoReply, nil, nil, nil, 0),
        ("sisimai-rhost-google-05.eml", .permanent, "kijitora@google.example.com", "5.2.2", "qbddfL3NB0z0D2Ld@smtp-gw1.example.jp", 1),
        ("sisimai-rhost-gsuite-03.eml", .transient, "neko@libsisimai.org", "4.0.0",
         "CAByYQsEVA+zJMnugH3M98xXcDj5XHp8HYsGtb5_r9Jd8LuyF=Q@mail.gmail.example.com", 1),
        ("sisimai-rhost-gsuite-06.eml", .transient, "sotoneko@nora.nyaan.jp", "4.4.1",
         "CAByYQsFyrGN=Aa73R9b-3-tiR7uFpUan+9CAWRmKP4z_GriF5Q@mail.gmail.example.com", 1),
        ("sisimai-rhost-microsoft-01.eml", .permanent, "kijitora@example.com", "5.7.606", "00000000000000000000000000000000000000000000000@example.net", 1),
        ("sisimai-rhost-yahooinc-01.eml", .permanent, "kijitora@aol.example.jp", "5.7.9", "20201113004812.08513C0196A@smtp.example.jp", 1),
    ]

    @Test("every file of the corpus has an expectation, and every expectation a file")
    func corpusIsCovered() {
        #expect(BounceCorpus.names == Self.expectations.map(\.file).sorted())
        #expect(BounceCorpus.names.count >= 40)
    }

    @Test("each real message reads as expected", arguments: expectations.map(\.file))
    func reads(file: String) throws {
        let expected = try #require(Self.expectations.first { $0.file == file })
        let report = BounceReport.read(try BounceCorpus.bytes(file))
        #expect(report.verdict == expected.verdict)
        #expect(report.decidingRecipient?.address == expected.recipient)
        #expect(report.decidingRecipient?.status == expected.status)
        #expect(report.returnedMessageID == expected.messageID)
        #expect(report.recipients.count == expected.blocks)
    }

    /// The class of every permanent report of the corpus (`BounceClass`, docs/bounces.md): only
    /// the dead addresses would make a contact undeliverable.
    static let classes: [String: BounceClass] = [
        "flufl-dsn_12.eml": .noSuchAddress, "postfix-permanent-550.eml": .noSuchAddress, "postfix-permanent-headers.eml": .noSuchAddress,
        "sisimai-crlf-lhost-postfix-01.eml": .noSuchAddress, "sisimai-lhost-amazonses-05.eml": .noSuchAddress,
        "sisimai-lhost-outlook-02.eml": .noSuchAddress, "sisimai-lhost-outlook-04.eml": .noSuchAddress,
        "sisimai-lhost-sendmail-02.eml": .noSuchAddress,
        // Status 5.0.0 and only Gmail's sentence: the words decide.
        "sisimai-rfc3464-42.eml": .noSuchAddress,
        // Status 5.0.0, and SES's own `5.3.0` before the remote's "550 Unknown user": the first code
        // that says something decides — in doubt, not a dead address.
        "sisimai-lhost-amazonses-02.eml": .system,
        // Status 5.0.0, "550 Bad SPF records": a policy refusal, not an unknown recipient.
        "sisimai-lhost-exim-29.eml": .policy,
        // 5.1.8: the sender's address (ours) was refused, not the recipient's.
        "sisimai-lhost-office365-05.eml": .other,
        "sisimai-rhost-google-05.eml": .mailbox, "sisimai-rhost-microsoft-01.eml": .policy, "sisimai-rhost-yahooinc-01.eml": .policy,
    ]

    @Test("each permanent report of the corpus has its class", arguments: expectations.filter { $0.verdict == .permanent }.map(\.file))
    func classes(file: String) throws {
        let report = BounceReport.read(try BounceCorpus.bytes(file))
        #expect(report.decidingRecipient?.bounceClass == Self.classes[file])
    }

    @Test("Postfix's report: the VERP address it was sent to, the diagnostic unfolded, the action")
    func postfixDetails() throws {
        let report = BounceReport.read(try BounceCorpus.bytes("postfix-permanent-550.eml"))
        #expect(report.addressedTo == ["bounces+7k3mq2xw9d8f1a@notify.sileme.test"])
        let block = try #require(report.recipients.first)
        #expect(block.action == "failed" && block.originalRecipient == "perm550@gone.example")
        #expect(block.diagnostic == "smtp; 550 5.1.1 <perm550@gone.example>: Recipient address rejected: mailbox unavailable")
        let delayed = BounceReport.read(try BounceCorpus.bytes("postfix-delayed-451.eml"))
        #expect(delayed.recipients.first?.action == "delayed")
    }

    @Test("a complaint keeps its feedback type")
    func complaints() throws {
        #expect(BounceReport.read(try BounceCorpus.bytes("sisimai-arf-01.eml")).feedbackType == "abuse")
        #expect(BounceReport.read(try BounceCorpus.bytes("sisimai-arf-19.eml")).feedbackType == "auth-failure")
    }

    @Test("CRLF and LF line ends read alike")
    func lineEnds() throws {
        let lf = try BounceCorpus.bytes("postfix-permanent-550.eml")
        var crlf: [UInt8] = []
        for byte in lf {
            if byte == 0x0A { crlf.append(0x0D) }
            crlf.append(byte)
        }
        #expect(BounceReport.read(crlf) == BounceReport.read(lf))
    }

    @Test("a message over the limit is not read: too large")
    func tooLarge() throws {
        var big = try BounceCorpus.bytes("postfix-permanent-550.eml")
        big += [UInt8](repeating: 0x41, count: 5 * 1024 * 1024)
        #expect(BounceReport.read(big).verdict == .tooLarge)
        #expect(BounceReport.read([]).verdict == .unparsed)
    }
}
