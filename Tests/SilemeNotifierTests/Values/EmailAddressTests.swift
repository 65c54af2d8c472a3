import Testing
import Values

@Suite("EmailAddress")
struct EmailAddressTests {
    static let validCases: [(String, String)] = [
        ("a@b.co", "a@b.co"),
        ("first.last+tag@sub.example.com", "first.last+tag@sub.example.com"),
        ("A@Example.COM", "A@example.com"),
        ("  bob@example.org \r\n", "bob@example.org"),
        ("o'neil_x-y!#$%&*/=?^`{|}~@example.com", "o'neil_x-y!#$%&*/=?^`{|}~@example.com"),
        ("a@bücher.de", "a@xn--bcher-kva.de"),
        ("a@BÜCHER.de", "a@xn--bcher-kva.de"),
        ("a@bu\u{0308}cher.de", "a@xn--bcher-kva.de"),  // decomposed ü
        ("a@例子.中国", "a@xn--fsqu00a.xn--fiqs8s"),
        ("a@例子。中国", "a@xn--fsqu00a.xn--fiqs8s"),  // ideographic full stop
        ("a@ｅｘａｍｐｌｅ．ｃｏｍ", "a@example.com"),  // full-width forms
        ("a@xn--bcher-kva.de", "a@xn--bcher-kva.de"),
        ("a@1.2.3.com", "a@1.2.3.com"),
        ("X-Y@A-B.C0M", "X-Y@a-b.c0m"),
        ("a@" + String(repeating: "b", count: 63) + ".com", "a@" + String(repeating: "b", count: 63) + ".com"),
    ]

    @Test("accepts and normalizes valid addresses", arguments: validCases)
    func valid(raw: String, expected: String) throws {
        let address = try EmailAddress(validating: raw)
        #expect(address.address == expected)
        #expect(address.localPart + "@" + address.domain == expected)
    }

    static let invalidCases: [(String, AddressError)] = [
        ("", .empty),
        (" \t ", .empty),
        ("alice.example.com", .missingAt),
        ("alice smith@example.com", .whitespace),
        ("alice@exam ple.com", .whitespace),
        ("alice\u{3000}@example.com", .whitespace),
        ("a@b@c", .multipleAt),
        ("a@b@c.com", .multipleAt),
        ("a..b@x.com", .misplacedDot),
        (".a@x.com", .misplacedDot),
        ("a.@x.com", .misplacedDot),
        ("@x.com", .missingLocalPart),
        ("a@", .missingDomain),
        ("a@-x.com", .invalidDomain),
        ("a@\u{301}example.com", .missingAt),  // the @ carries a combining mark: no separator
        ("a@x.c@m", .multipleAt),
        ("a@" + String(repeating: "b", count: 63) + "." + String(repeating: "c", count: 64), .invalidDomain),
        ("a@x.-com", .invalidDomain),
        ("a@x.com-", .invalidDomain),
        ("a@1.2", .invalidDomain),
        ("a@x-.com", .invalidDomain),
        ("a@x", .invalidDomain),
        ("a@x.123", .invalidDomain),
        ("a@x..com", .invalidDomain),
        ("a@.x.com", .invalidDomain),
        ("a@x.com.", .invalidDomain),
        ("a@[192.0.2.1]", .invalidDomain),
        ("a@exa_mple.com", .invalidDomain),
        ("a@x\u{202E}y.com", .invalidDomain),
        ("a@😀.com", .invalidDomain),
        ("a@例子!.中国", .invalidDomain),
        ("a@" + String(repeating: "b", count: 64) + ".com", .invalidDomain),
        ("a\r\nBcc: x@y.com", .controlCharacter),
        ("a@x.com\r\nBcc: y@z.com", .controlCharacter),
        ("a\t@x.com", .controlCharacter),
        ("a@x.com\u{0}", .controlCharacter),
        ("a\u{7F}@x.com", .controlCharacter),
        ("a\u{0B}b@x.com", .controlCharacter),
        ("a@x.com\u{1F}", .controlCharacter),
        ("a\u{85}@x.com", .controlCharacter),
        ("\"quoted\"@x.com", .quotedLocalPart),
        ("\"john doe\"@example.com", .quotedLocalPart),
        ("\"a@b\"@example.com", .quotedLocalPart),
        ("用户@example.com", .nonASCIILocalPart),
        ("josé@example.com", .nonASCIILocalPart),
        ("a<b>@x.com", .invalidLocalCharacter),
        ("a,b@x.com", .invalidLocalCharacter),
        ("a;b@x.com", .invalidLocalCharacter),
        ("a:b@x.com", .invalidLocalCharacter),
        ("a(b)@x.com", .invalidLocalCharacter),
        ("a[b]@x.com", .invalidLocalCharacter),
        ("a\\b@x.com", .invalidLocalCharacter),
        ("a\"b@x.com", .invalidLocalCharacter),
        (String(repeating: "a", count: 65) + "@x.com", .localPartTooLong),
        (String(repeating: "a", count: 2000) + "@x.com", .tooLong),
    ]

    @Test("rejects invalid addresses with the right reason", arguments: invalidCases)
    func invalid(raw: String, expected: AddressError) {
        #expect(throws: expected) { try EmailAddress(validating: raw) }
    }

    @Test("enforces 254 octets for the whole address and 64 for the local part")
    func lengthLimits() throws {
        let labels = (0..<5).map { _ in String(repeating: "b", count: 58) }.joined(separator: ".")
        let threeHundred = "a@" + labels + ".com"
        #expect(threeHundred.utf8.count == 300)
        #expect(throws: AddressError.tooLong) { try EmailAddress(validating: threeHundred) }

        let local = String(repeating: "l", count: 64)
        let domain = [63, 63, 57].map { String(repeating: "d", count: $0) }.joined(separator: ".") + ".com"
        let exactly254 = local + "@" + domain
        #expect(exactly254.utf8.count == 254)
        #expect(try EmailAddress(validating: exactly254).address == exactly254)
        let over = String(local.dropFirst()) + "@"
            + [63, 63, 59].map { String(repeating: "d", count: $0) }.joined(separator: ".") + ".com"
        #expect(over.utf8.count == 255)
        #expect(throws: AddressError.tooLong) { try EmailAddress(validating: over) }
    }

    @Test("masks all but the first character of the local part", arguments: [
        ("alice@example.com", "a***@example.com"),
        ("a@x.com", "a***@x.com"),
        ("Bob.Smith@Example.ORG", "B***@example.org"),
        ("z@例子.中国", "z***@xn--fsqu00a.xn--fiqs8s"),
    ])
    func masking(raw: String, expected: String) throws {
        let address = try EmailAddress(validating: raw)
        #expect(address.masked == expected)
        #expect("\(address)" == expected)  // interpolation into a log line never shows it in full
    }

    @Test("equal after normalization")
    func equality() throws {
        #expect(try EmailAddress(validating: " x@EXAMPLE.com") == EmailAddress(validating: "x@example.com"))
        #expect(try EmailAddress(validating: "X@example.com") != EmailAddress(validating: "x@example.com"))
    }

    @Test("every error has its own short reason")
    func reasons() {
        let all: [AddressError] = [
            .empty, .controlCharacter, .whitespace, .missingAt, .multipleAt, .quotedLocalPart,
            .missingLocalPart, .missingDomain, .nonASCIILocalPart, .invalidLocalCharacter,
            .misplacedDot, .localPartTooLong, .tooLong, .invalidDomain,
        ]
        #expect(Set(all.map(\.reason)).count == all.count)
        #expect(all.allSatisfy { !$0.reason.isEmpty && $0.description == $0.reason })
        #expect(AddressError.missingAt.reason == "missing @")
        #expect(AddressError.quotedLocalPart.reason == "quoted local part not supported")
        #expect(AddressError.nonASCIILocalPart.reason == "non-ASCII local part")
    }
}
