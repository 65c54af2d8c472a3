import Testing
import Values

@Suite("DisplayName")
struct DisplayNameTests {
    @Test("cleans control, format and whitespace characters", arguments: [
        ("张三", "张三"),
        ("张三\r\nBcc: x@y.com", "张三 Bcc: x@y.com"),
        ("  Li \t\t Lei \n", "Li Lei"),
        ("Line\u{2028}Sep\u{2029}Para\u{85}Nel", "Line Sep Para Nel"),
        ("A\u{0}B\u{7F}C\u{1B}[31mD\u{9B}E", "ABC[31mDE"),
        ("abc\u{202E}gnp.exe", "abcgnp.exe"),
        ("\u{202A}a\u{202B}b\u{202C}c\u{202D}d\u{2066}e\u{2067}f\u{2068}g\u{2069}h\u{200E}i\u{200F}j\u{061C}k", "abcdefghijk"),
        ("\u{FEFF}zero\u{200B}width\u{00AD}", "zerowidth"),
        ("王 \u{202E} 五", "王 五"),
        ("  王\u{3000}五  ", "王 五"),
        ("مهرداد\u{200C}ی", "مهرداد\u{200C}ی"),  // ZWNJ kept
        ("김\u{3000}민준", "김 민준"),
        ("\u{4DC0}䷀ ~!", "\u{4DC0}䷀ ~!"),
        (String(repeating: "e\u{301}", count: 100), String(repeating: "e\u{301}", count: 100)),  // 200 scalars, 100 characters
    ])
    func cleaning(raw: String, expected: String) throws {
        let name = try DisplayName(cleaning: raw)
        #expect(name.value == expected)
        #expect(!name.value.unicodeScalars.contains { $0.properties.generalCategory == .control })
    }

    @Test("keeps ZWJ emoji sequences intact")
    func emoji() throws {
        let family = "👨\u{200D}👩\u{200D}👧"
        let name = try DisplayName(cleaning: "\(family) 王小明 🏳️‍🌈")
        #expect(name.value == "\(family) 王小明 🏳️‍🌈")
        #expect(name.value.first == Character(family))
        #expect(name.value.unicodeScalars.filter { $0 == "\u{200D}" }.count == 3)
    }

    @Test("nothing visible left is an error", arguments: [
        "", "   ", "\r\n\t", "\u{0}\u{7F}", "\u{202E}\u{200B}\u{FEFF}", "\u{200D}", " \u{3000} \u{2028} ",
    ])
    func empty(raw: String) {
        #expect(throws: NameError.empty) { try DisplayName(cleaning: raw) }
    }

    @Test("caps a 10 KB name at 100 characters with an ellipsis")
    func capped() throws {
        let raw = String(repeating: "名字", count: 1_700)  // 10 200 bytes
        #expect(raw.utf8.count > 10_000)
        let name = try DisplayName(cleaning: raw)
        #expect(name.value.count == DisplayName.maxLength)
        #expect(name.value.hasSuffix("…"))
        #expect(raw.hasPrefix(name.value.dropLast()))
    }

    @Test("never splits a grapheme cluster when cutting")
    func cutOnClusters() throws {
        let family = "👨\u{200D}👩\u{200D}👧\u{200D}👦"
        let name = try DisplayName(cleaning: String(repeating: family, count: 150))
        #expect(name.value.count == 100)
        #expect(name.value.dropLast().allSatisfy { $0 == Character(family) })
        #expect(name.value.last == "…")
    }

    @Test("no space before the ellipsis; exactly 100 characters are not cut")
    func boundaries() throws {
        let exact = String(repeating: "x", count: 100)
        #expect(try DisplayName(cleaning: exact).value == exact)
        let spaced = String(repeating: "y", count: 98) + " z" + String(repeating: "w", count: 10)
        #expect(try DisplayName(cleaning: spaced).value == String(repeating: "y", count: 98) + "…")
    }
}
