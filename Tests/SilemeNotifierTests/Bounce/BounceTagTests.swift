import Bounce
import Foundation
import Testing
import Values

/// The VERP tag: short, safe in a local part, and unforgeable.
@Suite("Bounce tags")
struct BounceTagTests {
    static let address = try! EmailAddress(validating: "bounces@notify.example.com")
    static let tags = BounceTag(address: address, secret: Secret("b-0123456789abcdef0123456789abcdef"))

    @Test("a row's envelope sender is local+TAG@domain, and the tag names the row again", arguments: [Int64(1), 42, 123_456, 9_999_999_999, .max])
    func roundTrip(row: Int64) throws {
        let sender = Self.tags.envelopeSender(row: row)
        let tag = Self.tags.tag(row: row)
        #expect(sender == "bounces+\(tag)@notify.example.com")
        #expect(tag.count <= 29 && tag.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) })
        #expect(try EmailAddress(validating: sender).address == sender)
        #expect(Self.tags.row(tag: tag) == row)
        #expect(Self.tags.row(in: sender) == row)
        #expect(Self.tags.row(in: "<\(sender.uppercased())>") == row)
    }

    @Test("row 123456 has a short tag")
    func short() { #expect(Self.tags.tag(row: 123_456).count == 20) }

    @Test("forged, altered, truncated, another key's, another mailbox's: nil")
    func refusals() {
        let tag = Self.tags.tag(row: 77)
        var altered = Array(tag)
        altered[altered.count - 1] = altered.last == "a" ? "b" : "a"
        let other = BounceTag(address: Self.address, secret: Secret("another-secret-0123456789abcdef01234"))
        let otherID = Self.tags.tag(row: 78)
        for bad in [String(altered), String(tag.dropLast()), tag + "a", "", "zz", other.tag(row: 77), String(otherID.prefix(2)) + tag.suffix(16),
                    "0" + tag, String(repeating: "0", count: 20), "abc-def", String(repeating: "v", count: 30)] {
            #expect(Self.tags.row(tag: bad) == nil, "\(bad)")
        }
        #expect(Self.tags.row(in: "bounces+\(tag)@other.example") == nil)
        #expect(Self.tags.row(in: "noreply+\(tag)@notify.example.com") == nil)
        #expect(Self.tags.row(in: "bounces@notify.example.com") == nil)
        #expect(Self.tags.row(in: "MAILER-DAEMON") == nil)
    }

    @Test("the Postfix corpus's VERP address is found in the report it was sent to")
    func foundInReport() throws {
        let tags = BounceTag(address: try EmailAddress(validating: "bounces@notify.sileme.test"), secret: Secret("b-0123456789abcdef0123456789abcdef"))
        let tag = tags.tag(row: 5)
        let bytes = try BounceCorpus.bytes("postfix-permanent-550.eml")
        let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "7k3mq2xw9d8f1a", with: tag)
        let report = BounceReport.read(Array(text.utf8))
        #expect(report.addressedTo.compactMap(tags.row(in:)) == [5])
        #expect(report.addressedTo.compactMap(Self.tags.row(in:)).isEmpty)
    }
}
