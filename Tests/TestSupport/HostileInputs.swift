/// Hostile user names, emergency emails and user ids, as a careless or malicious app database
/// could hold them: fixed corpora (each kind of trouble at least once) and seeded generators that
/// combine them, for the fuzz test of the mail composer and the bad-rows integration test.
public enum HostileInputs {
    /// Fragments names are built from, by kind.
    public static let nameFragments: [String] = controls + bidiAndInvisible + whitespace + emoji + scripts
        + encodedWordLookAlikes + headerLookAlikes + specials + plainWords

    /// C0 and C1 controls, CR/LF in every combination, DEL.
    public static let controls = [
        "\r", "\n", "\r\n", "\n\r", "\r\r\n", "\0", "\t", "\u{0B}", "\u{0C}", "\u{07}", "\u{08}", "\u{1B}",
        "\u{1B}[31m", "\u{1C}", "\u{1F}", "\u{7F}", "\u{80}", "\u{85}", "\u{8D}", "\u{9B}", "\u{9F}",
    ]
    /// Bidirectional controls (RTL override U+202E among them), zero-width and other invisible
    /// format characters, joiners, tag characters, noncharacters and private use.
    public static let bidiAndInvisible = [
        "\u{202E}", "\u{202D}", "\u{202A}", "\u{202B}", "\u{202C}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200E}", "\u{200F}", "\u{061C}", "\u{200B}", "\u{FEFF}", "\u{00AD}", "\u{2060}", "\u{180E}",
        "\u{200D}", "\u{200C}", "\u{E0001}", "\u{E0041}", "\u{FFFE}", "\u{FFFF}", "\u{E000}", "\u{10FFFF}", "\u{FFFD}",
        "\u{202E}gnp.exe", "abc\u{202E}fed",
    ]
    /// Whitespace of every kind: ASCII, no-break, ideographic, line and paragraph separators.
    public static let whitespace = [
        " ", "  ", "\u{A0}", "\u{3000}", "\u{2028}", "\u{2029}", "\u{1680}", "\u{2003}", "\u{202F}", "\u{205F}",
        " \t \r\n ",
    ]
    /// Emoji, with skin tones, ZWJ sequences, flags, keycaps and variation selectors.
    public static let emoji = [
        "😀", "👨‍👩‍👧", "👩🏽‍🦳", "🏳️‍🌈", "🇨🇳", "1️⃣", "🧑‍💻", "❤️", "👨‍👩‍👧‍👦👨‍👩‍👧‍👦", "🫠",
    ]
    /// CJK, Hangul, kana, Arabic, Hebrew, Devanagari, combining marks (also after a space).
    public static let scripts = [
        "王小明", "张三", "李四", "𠮷野家", "김민준", "さくら", "محمد", "שלום", "नमस्ते", "Zoë", "José",
        "Jose\u{301}", "e\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}\u{307}", " \u{301}", "\u{301}", "ก\u{E34}\u{E48}",
        "Ǆ", "ﬃ", "Ω", "İ",
    ]
    /// Text that looks like RFC 2047 encoded words, or pieces of them.
    public static let encodedWordLookAlikes = [
        "=?utf-8?B?SGk=?=", "=?UTF-8?Q?=0D=0ABcc:_x@y?=", "=?", "?=", "=?iso-8859-1?q?caf=E9?=", "=?utf-8?b?",
        "=?UTF-8?B?", "=?x?=", "?==?", "=?utf-8?q?a?= =?utf-8?q?b?=",
    ]
    /// Text that looks like header lines, MIME boundaries, SMTP's end of data, or template syntax.
    public static let headerLookAlikes = [
        "\r\nBcc: x@y", "\nTo: victim@example.com", "\r\n\r\nbody", "Subject: hi", "\r\n.\r\n", ".",
        "Content-Type: text/html", "--=_sileme_", "--", "From: evil@example.com", "\r\nX-Evil: 1",
        "MIME-Version: 2.0", "{{user_name}}", "{{{app_name}}}", "{{#x}}", "{{/x}}", "<script>alert(1)</script>",
        "&amp;", "&#x202E;",
    ]
    /// RFC 5322 specials and other punctuation.
    public static let specials = [
        "\"", "\\", "<", ">", ",", ";", ":", "@", "(", ")", "[", "]", "'", "`", "%", "\\\"", "\"\"", "<>", "a@b.c",
    ]
    /// Ordinary words.
    public static let plainWords = ["Alice", "Bob O'Neil", "Dr. Smith, Jr.", "x", "Mary-Jane", "ZHANG San"]

    /// One name of each kind the brief of issue 6 lists, plus a few mixtures.
    public static let names: [String] = [
        "王小明", "Eve\r\nBcc: victim@example.com\r\nX-Evil: 1", "a\rb", "a\nb", "a\r\nb", "nul\0name", "\u{1B}[2Jclear",
        "\u{85}next\u{9F}", "\u{202E}evil\u{202C}", "\u{2067}محمد\u{2069} Bob", "\u{200B}\u{FEFF}\u{2060}", "\u{200D}\u{200C}",
        String(repeating: "长", count: 3500), String(repeating: "word ", count: 2048), String(repeating: "x", count: 10_240),
        " ", " \t\r\n\u{3000}\u{A0}\u{2028} ", "", "李四 👨‍👩‍👧 😀", "🏳️‍🌈🇨🇳", "=?utf-8?B?SGk=?=", "=?UTF-8?Q?a?= =?UTF-8?Q?b?=",
        "\r\nBcc: x@y", "\"quoted\" \\back\\slash", "<angle@brackets>", "a, b; c: d", "O'Neil (home)", " \u{301}x",
        "{{user_name}}", "<script>张三", "\r\n.\r\n", String(repeating: "\u{202E}", count: 200) + "x",
        String(repeating: "👨‍👩‍👧", count: 300),
    ]

    /// Emergency emails of each kind (valid ones in `domain`): missing or several `@`, whitespace,
    /// CR/LF and NUL, quoted and over-long local parts, IDN and invalid domains, trailing dots,
    /// header and list syntax.
    public static func emails(domain: String) -> [String] {
        [
            "plain@\(domain)", "no-at-sign", "a@b@\(domain)", "a@b@c", "two words@\(domain)", "tab\t@\(domain)",
            "cr\r@\(domain)", "lf@\(domain)\n", "x@\(domain)\r\nBcc: victim@example.com", "nul\0@\(domain)",
            "\"quoted local\"@\(domain)", "\"q\"@\(domain)", String(repeating: "l", count: 300) + "@\(domain)",
            String(repeating: "l", count: 64) + "@\(domain)", String(repeating: "l", count: 65) + "@\(domain)",
            "a@" + String(repeating: "d", count: 290) + ".com", "a@bücher.de", "a@例子.中国", "a@пример.рф",
            "a@xn--bcher-kva.de", "a@ｅｘａｍｐｌｅ．ｃｏｍ", "trailing.@\(domain)", ".leading@\(domain)", "do..uble@\(domain)",
            "a@\(domain).", "a@.\(domain)", "a@\(domain)..com", "a@-x.com", "a@x-.com", "a@localhost", "a@123.456",
            "a@[127.0.0.1]", "<a@\(domain)>", "Name <a@\(domain)>", "a@\(domain), b@\(domain)", "a@\(domain);b@\(domain)",
            "Upper.Case+Tag@\(domain.uppercased())", "  padded@\(domain)  ", "o'neil!#$%&*/=?^`{|}~@\(domain)",
            "😀@\(domain)", "é@\(domain)", "a@😀.com", "a@exa\u{202E}mple.com", "a\u{200B}@\(domain)", "a@\(domain)\u{3000}",
            "", " ", "@", "a@", "@\(domain)", "=?utf-8?q?a?=@\(domain)", "a@\(domain)>\r\nBcc: x@y",
        ]
    }

    /// A random name: a corpus name, a 10 KB text, invisible-only text, or 1–10 fragments and random
    /// code points.
    public static func randomName(using rng: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<10:
            return rng.pick(names)
        case 10..<15:
            var text = ""
            while text.utf8.count < 10_240 { text += rng.pick(nameFragments) + (rng.chance(30) ? " " : "") }
            return text
        case 15..<22:
            return (0..<Int.random(in: 1...6, using: &rng)).map { _ in
                rng.pick(rng.chance(50) ? whitespace : rng.chance(50) ? controls : bidiAndInvisible)
            }.joined()
        default:
            return (0..<Int.random(in: 1...10, using: &rng)).map { _ in
                rng.chance(20) ? String(randomScalar(using: &rng)) : rng.pick(nameFragments)
            }.joined()
        }
    }

    /// A random emergency email: a corpus email, a plain or internationalized address in `domain`
    /// or a random IDN domain, with 0–3 mutations (characters inserted, wrapped, padded, quoted…).
    public static func randomEmail(domain: String, using rng: inout SeededGenerator) -> String {
        var email: String
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<3:
            email = rng.pick(emails(domain: domain))
        case 3..<6:
            email = randomLocalPart(using: &rng) + "@" + domain
        default:
            let labels = ["bücher", "例子", "пример", "مثال", "δοκιμή", "ñandú", "straße", "ｅｘａｍｐｌｅ", "中国", "测试", "xn--fsqu00a", "sub", "a-b"]
            let tld = rng.pick(["com", "中国", "рф", "de", "xn--fiqs8s", "co.uk"])
            email = randomLocalPart(using: &rng) + "@" + (0..<Int.random(in: 1...3, using: &rng)).map { _ in rng.pick(labels) }
                .joined(separator: rng.chance(90) ? "." : "\u{3002}") + "." + tld
        }
        let mutations = rng.chance(50) ? 0 : Int.random(in: 1...3, using: &rng)
        for _ in 0..<mutations { email = mutate(email, using: &rng) }
        return email
    }

    /// A user id: a random UUID, or (one time in ten) hostile text, as a hand-made database with a
    /// text primary key could hold.
    public static func randomUserID(using rng: inout SeededGenerator) -> String {
        if rng.chance(10) { return rng.chance(30) ? String(repeating: "id-", count: 3500) : randomName(using: &rng) }
        let hex = (0..<32).map { _ in String(Int.random(in: 0..<16, using: &rng), radix: 16) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex.dropFirst(range.lowerBound).prefix(range.count))
        }
        return parts.joined(separator: "-")
    }

    /// Letters, digits and RFC 5322 `atext` symbols, with single dots, 1–20 characters.
    private static func randomLocalPart(using rng: inout SeededGenerator) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~")
        var local = String((0..<Int.random(in: 1...20, using: &rng)).map { _ in rng.pick(alphabet) })
        if local.count > 2, rng.chance(30) {
            local.insert(".", at: local.index(local.startIndex, offsetBy: Int.random(in: 1..<(local.count - 1), using: &rng)))
        }
        return local
    }

    /// One hostile change to an address.
    private static func mutate(_ email: String, using rng: inout SeededGenerator) -> String {
        let inserts = [" ", "@", "\r", "\n", "\r\n", "\0", "\t", "\"", "<", ">", ",", ";", ":", "(", ")", "[", "]",
                       "\\", ".", "..", "\u{202E}", "\u{200B}", "\u{3000}", "😀", "é", "-", "=?utf-8?q?x?=", "\u{85}"]
        switch Int.random(in: 0..<12, using: &rng) {
        case 0..<4:
            var scalars = Array(email.unicodeScalars)
            let position = Int.random(in: 0...scalars.count, using: &rng)
            scalars.insert(contentsOf: rng.pick(inserts).unicodeScalars, at: position)
            return String(String.UnicodeScalarView(scalars))
        case 4: return "<\(email)>"
        case 5: return "Name <\(email)>"
        case 6: return email + rng.pick([", b@example.com", ";b@example.com", "\r\nBcc: victim@example.com", ".", "\r\n"])
        case 7: return rng.pick([" ", "\t", "\r\n", "\u{A0}"]) + email + rng.pick([" ", "\t", "\r\n", "\u{3000}"])
        case 8:
            guard let at = email.firstIndex(of: "@") else { return email + "@" }
            return "\"" + String(email[..<at]) + "\"" + String(email[at...])
        case 9: return String(repeating: rng.pick(["a", "é", "-", "x."]), count: Int.random(in: 50...300, using: &rng)) + email
        case 10: return email.uppercased()
        default:
            guard let at = email.lastIndex(of: "@") else { return email }
            return String(email[...at]) + String(repeating: "d", count: Int.random(in: 60...70, using: &rng)) + "."
                + String(email[email.index(after: at)...])
        }
    }

    /// A random code point from a range that tends to cause trouble: C0/C1 controls, Latin,
    /// combining marks, bidi and format characters, CJK, Hangul, emoji, private use, anything in the BMP.
    private static func randomScalar(using rng: inout SeededGenerator) -> Unicode.Scalar {
        let ranges: [ClosedRange<UInt32>] = [
            0x00...0x1F, 0x7F...0x9F, 0x20...0x7E, 0xA0...0x24F, 0x300...0x36F, 0x590...0x6FF, 0x2000...0x206F,
            0x3000...0x303F, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0x1F300...0x1FAFF, 0xE000...0xF8FF, 0xFE00...0xFEFF,
            0x20000...0x2A6DF, 0xE0000...0xE007F, 0x0...0xFFFF,
        ]
        while true {
            if let scalar = Unicode.Scalar(UInt32.random(in: rng.pick(ranges), using: &rng)) { return scalar }
        }
    }
}
