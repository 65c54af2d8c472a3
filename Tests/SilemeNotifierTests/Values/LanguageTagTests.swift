import Foundation
import Testing
import Values

@Suite("Language tags: canonical form, lookups, the choice per recipient, counts and dates")
struct LanguageTagTests {
    @Test("tags are read in their canonical case; what is not a tag is nil", arguments: [
        ("en", "en"), ("EN-gb", "en-GB"), ("zh_TW", "zh-TW"), ("zh-hant-tw", "zh-Hant-TW"), (" ru ", "ru"),
        ("es-419", "es-419"), ("sr-Latn", "sr-Latn"), ("de-DE-1996", "de-DE"), ("en-US-u-ca-gregory", "en-US"),
    ])
    func canonical(text: String, identifier: String) {
        #expect(LanguageTag(text)?.identifier == identifier)
    }

    @Test("not tags", arguments: ["", "e", "english", "klingon!", "zh--TW", "x-private", "i-klingon", "en-a1b", "中文", "en-"])
    func notTags(text: String) {
        #expect(LanguageTag(text) == nil)
    }

    @Test("lookups: as written, completed by ICU's likely subtags, then shortened")
    func lookups() {
        #expect(LanguageTag("zh-TW")!.lookups.map(\.identifier) == ["zh-TW", "zh-Hant-TW", "zh-Hant", "zh"])
        #expect(LanguageTag("zh-Hant-TW")!.lookups.map(\.identifier) == ["zh-Hant-TW", "zh-Hant", "zh-TW", "zh"])
        #expect(LanguageTag("zh")!.lookups.map(\.identifier) == ["zh", "zh-Hans-CN", "zh-Hans"])
        #expect(LanguageTag("zh-HK")!.lookups.map(\.identifier) == ["zh-HK", "zh-Hant-HK", "zh-Hant", "zh"])
        #expect(LanguageTag("en-GB")!.lookups.map(\.identifier) == ["en-GB", "en-Latn-GB", "en-Latn", "en"])
    }

    static let shipped: Set<LanguageTag> = [LanguageTag("zh-Hans")!, LanguageTag("zh-Hant")!, LanguageTag("en")!]
    static let fallback = LanguageTag("zh-Hans")!

    @Test("lookups are worked out once a tag, and still right for tags past what is kept")
    func lookupsKept() {
        let first = LanguageTag("zh-TW")!.lookups
        #expect(LanguageTag("zh-tw")!.lookups == first)
        // More distinct tags than the process keeps: each still gets its own lookups.
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let many = letters.flatMap { a in letters.flatMap { b in ["US", "GB", "DE", "FR", "CN", "TW", "JP"].map { "\(a)\(b)-\($0)" } } }
        #expect(many.count > LanguageTag.knownLimit)
        for text in many {
            let tag = LanguageTag(text)!
            #expect(tag.lookups.first == tag)
            #expect(tag.lookups.last?.identifier == String(text.prefix(2)))
        }
        #expect(LanguageTag("zh-TW")!.lookups.map(\.identifier) == ["zh-TW", "zh-Hant-TW", "zh-Hant", "zh"])
        #expect(LanguageTag("en-GB")!.lookups.map(\.identifier) == ["en-GB", "en-Latn-GB", "en-Latn", "en"])
    }

    @Test("the contact's language first, then the user's, then the default; each through its lookups")
    func choice() {
        func choose(_ contact: String?, _ user: String?) -> LanguageTag.Choice {
            .choose(contact: contact, user: user, fallback: Self.fallback, available: Self.shipped)
        }
        #expect(choose("en", "zh-Hant").tag.identifier == "en")
        #expect(choose("en-GB", nil) == .init(tag: LanguageTag("en")!, requested: "en-GB", fallback: nil))
        #expect(choose("zh-Hant-TW", nil).tag.identifier == "zh-Hant")
        #expect(choose("zh-TW", nil).tag.identifier == "zh-Hant")
        #expect(choose("zh", nil).tag.identifier == "zh-Hans")
        #expect(choose(nil, "zh-HK").tag.identifier == "zh-Hant")
        #expect(choose(nil, nil) == .init(tag: Self.fallback, requested: nil, fallback: nil))
        #expect(choose("  ", nil) == .init(tag: Self.fallback, requested: nil, fallback: nil))
        // Russian is not shipped: the user's language decides, else the default, and the choice says why.
        #expect(choose(nil, "ru") == .init(tag: Self.fallback, requested: "ru", fallback: .notAvailable(LanguageTag("ru")!)))
        #expect(choose("ru", "en") == .init(tag: LanguageTag("en")!, requested: "ru", fallback: .notAvailable(LanguageTag("ru")!)))
        // A stored text that is not a tag is reported, and the next one decides.
        #expect(choose("klingon!", "en") == .init(tag: LanguageTag("en")!, requested: "klingon!", fallback: .notATag("klingon!")))
        // An operator's folder for Russian is used.
        let withRussian = Self.shipped.union([LanguageTag("ru")!])
        #expect(LanguageTag.Choice.choose(contact: "ru-RU", user: nil, fallback: Self.fallback, available: withRussian).tag.identifier == "ru")
    }

    /// CLDR's plural categories: en one/other; ru one (1, 21), few (2), many (5, 11); ar one, two,
    /// few (3–10), many (11–99), other; zh other only. Expected texts are CLDR's unit patterns.
    @Test("counts of days follow each language's plural rules (CLDR), through Foundation")
    func days() {
        let counts = [1, 2, 5, 11, 21]
        #expect(counts.map(LanguageTag("en")!.days) == ["1 day", "2 days", "5 days", "11 days", "21 days"])
        #expect(counts.map(LanguageTag("ru")!.days) == ["1 день", "2 дня", "5 дней", "11 дней", "21 день"])
        #expect(counts.map(LanguageTag("ar")!.days) == ["يوم", "يومان", "5 أيام", "11 يومًا", "21 يومًا"])
        #expect(counts.map(LanguageTag("zh-Hans")!.days) == ["1天", "2天", "5天", "11天", "21天"])
        #expect(LanguageTag("zh-Hant")!.days(3) == "3天")
    }

    @Test("a calendar date written for the language names the same day everywhere")
    func dates() {
        let day = CalendarDate(year: 2026, month: 5, day: 29)!
        #expect(LanguageTag("en")!.date(day) == "May 29, 2026")
        #expect(LanguageTag("zh-Hans")!.date(day) == "2026年5月29日")
        #expect(LanguageTag("ru")!.date(day) == "29 мая 2026\u{202F}г.")  // CLDR's narrow no-break space
    }
}
