import Foundation
import Testing
@testable import AckPage
@testable import Acknowledgement
import Config
import Store
import Texts
import Values

/// The acknowledgement link's token and key (docs/acknowledgement.md): what verifies, what does not, and that
/// every bad token is refused alike.
@Suite("Acknowledgement tokens")
struct AckTokenTests {
    static let key = AckKey(secret: Secret("k-0123456789abcdef0123456789abcdef"))
    static let user = "3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
    static let alert = CalendarDate(year: 2026, month: 1, day: 13)!

    static func token(expires: CalendarDate = alert.adding(days: 28), contact: String = "Daughter@Example.com ") -> AckToken {
        AckToken(userID: user.uppercased(), alertDate: alert, expiresOn: expires, contactTag: key.tag(contact: contact))
    }

    @Test("a signed token verifies to the same user, streak, expiry and contact, and is URL-safe")
    func roundTrip() throws {
        let text = Self.key.sign(Self.token())
        #expect(text.count == 68 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        let back = try #require(Self.key.verify(text, today: Self.alert))
        #expect(back == Self.token() && back.userID == Self.user)
        #expect(Self.key.tag(back.contactTag, matches: "daughter@example.com"))
        #expect(!Self.key.tag(back.contactTag, matches: "neighbour@example.com"))
    }

    @Test("forged, truncated, extended, another key's, expired: all nil")
    func refusals() {
        let text = Self.key.sign(Self.token())
        var flipped = Array(text)
        flipped[10] = flipped[10] == "A" ? "B" : "A"
        let other = AckKey(secret: Secret("another-secret-0123456789abcdef0123"))
        for bad in [String(flipped), String(text.dropLast()), String(text.dropLast(20)), text + "A", "", "%%%", other.sign(Self.token()),
                    String(repeating: "A", count: 68)] {
            #expect(Self.key.verify(bad, today: Self.alert) == nil, "\(bad)")
        }
        #expect(Self.key.verify(text, today: Self.alert.adding(days: 27)) != nil, "the last good day")
        #expect(Self.key.verify(text, today: Self.alert.adding(days: 28)) == nil, "expired")
    }

    @Test("the expiry is 30 days after the streak's first missed day, the same for the alert and its follow-up")
    func expiry() {
        // L = 01-10: missed 01-11 and 01-12; the alert of 01-13 counts 2, the follow-up of 01-16 counts 5.
        let fromAlert = AckToken.expiry(runDate: Self.alert, missedDays: 2, validDays: 30)
        let fromFollowUp = AckToken.expiry(runDate: Self.alert.adding(days: 3), missedDays: 5, validDays: 30)
        #expect(fromAlert == fromFollowUp && fromAlert == CalendarDate(year: 2026, month: 2, day: 10)!)
    }

    @Test("the anti-forgery field belongs to its link only")
    func formField() {
        let a = Self.key.sign(Self.token()), b = Self.key.sign(Self.token(contact: "other@example.com"))
        #expect(Self.key.formFieldMatches(Self.key.formField(token: a), token: a))
        #expect(!Self.key.formFieldMatches(Self.key.formField(token: b), token: a))
        #expect(!Self.key.formFieldMatches("", token: a))
    }

    @Test("links: none without ACK_BASE_URL; with it, the base, a slash and the token")
    func links() throws {
        var configuration = NotifierConfiguration()
        #expect(AckLinks(configuration.ack) == nil)
        configuration.ack = AckSettings(baseURL: "https://ack.example.com/i/", secret: Secret("k-0123456789abcdef0123456789abcdef"), listen: nil)
        let link = try #require(AckLinks(configuration.ack)?.link(userID: Self.user, alertDate: Self.alert, contact: "daughter@example.com",
                                                             runDate: Self.alert, missedDays: 2))
        #expect(link.hasPrefix("https://ack.example.com/i/") && !link.contains("daughter"))
        let token = String(link.split(separator: "/").last!)
        #expect(Self.key.verify(token, today: Self.alert)?.alertDate == Self.alert)
    }

    @Test("Accept-Language: weights, regions and scripts, refusals; simplified Chinese by default",
          arguments: [(nil, "zh-Hans"), ("en-US,en;q=0.9", "en"), ("zh-TW", "zh-Hant"), ("zh-HK, en;q=0.9", "zh-Hant"),
                      ("zh-Hant", "zh-Hant"), ("zh-CN", "zh-Hans"), ("zh-SG", "zh-Hans"), ("fr, en;q=0.5, zh;q=0.4", "en"),
                      ("en;q=0, zh", "zh-Hans"), ("de", "zh-Hans"), ("zh;q=0.2, en-GB;q=0.8", "en"), ("EN", "en"), ("*", "zh-Hans"),
                      ("ru, zh-tw;q=0.5", "zh-Hant")] as [(String?, String)])
    func language(_ header: String?, _ expected: String) {
        #expect(AckLanguage.choose(browser: header, fallback: nil, available: Self.shipped) == LanguageTag(expected))
    }

    /// The languages the page is written in without `TEMPLATE_DIR`.
    static let shipped: Set<LanguageTag> = ["zh-Hans", "zh-Hant", "en"].compactMap(LanguageTag.init).reduce(into: []) { $0.insert($1) }

    /// The page's words in a shipped language.
    static func words(_ language: String) -> AckText {
        AckText(texts: try! TextTable(file: TextTable.page, directory: nil, defaultLanguage: .serviceDefault), language: LanguageTag(language)!)
    }

    /// The reader's page: the contact's language, then the browser's, then the user's, then the
    /// service's default; a stored text the page is not written in (or not a tag) passes on.
    @Test("the page's language: the contact's first, then the browser's, the user's, the default",
          arguments: [
              ("en-GB", "zh-CN", "zh-Hans", nil, "en"),
              ("zh-Hant-TW", "en-US", nil, nil, "zh-Hant"),
              (nil, "en-US", "zh-Hant", nil, "en"),
              ("ru", "zh-HK", nil, nil, "zh-Hant"),
              ("klingon!", nil, "en", nil, "en"),
              (nil, nil, "ru", "zh-Hant", "zh-Hant"),
              (nil, "de", nil, "en", "en"),
              (nil, nil, nil, "ru", "zh-Hans"),
              ("zh", "en", nil, nil, "zh-Hans"),
          ] as [(String?, String?, String?, String?, String)])
    func readerLanguage(_ contact: String?, _ browser: String?, _ user: String?, _ fallback: String?, _ expected: String) {
        #expect(AckLanguage.choose(contact: contact, browser: browser, user: user, fallback: fallback.flatMap(LanguageTag.init),
                                   available: Self.shipped) == LanguageTag(expected))
    }

    @Test("with an operator's ru/page.texts the page is written in Russian too: a Russian contact, user, browser or default gets it")
    func russianLanguage() {
        let withRussian = Self.shipped.union([LanguageTag("ru")!])
        #expect(AckLanguage.choose(contact: "ru-RU", browser: "en", user: nil, fallback: nil, available: withRussian) == LanguageTag("ru"))
        #expect(AckLanguage.choose(contact: "fr", browser: "de, ru;q=0.5", user: "en", fallback: nil, available: withRussian) == LanguageTag("ru"))
        #expect(AckLanguage.choose(contact: nil, browser: nil, user: nil, fallback: LanguageTag("ru"), available: withRussian) == LanguageTag("ru"))
        #expect(AckLanguage.choose(contact: "ru", browser: nil, user: nil, fallback: nil, available: Self.shipped) == LanguageTag("zh-Hans"))
    }

    @Test("the page: no script, no full address, escaped values, the form only while the reader can press; the neutral page tells nothing")
    func page() throws {
        let tag = Self.key.tag(contact: "daughter@example.com")
        let token = AckToken(userID: Self.user, alertDate: Self.alert, expiresOn: Self.alert.adding(days: 28), contactTag: tag)
        let streak = AcknowledgementStore.Streak(
            rawName: "张<b>三", lastCheckIn: Self.alert.adding(days: -3), missedDaysAtAlert: 2, checkedInSince: nil,
            recipients: [.init(contact: "daughter@example.com", masked: "d***@example.com", acknowledgedAt: nil),
                         .init(contact: "friend@example.com", masked: "f***@example.com", acknowledgedAt: Date(timeIntervalSince1970: 1_768_300_000))])
        let zone = TimeZone(identifier: "Asia/Shanghai")!
        let made = try #require(AckPageModel.make(streak, token: token, tokenText: "T", key: Self.key, today: Self.alert.adding(days: 1), zone: zone))
        #expect(made.reader.contact == "daughter@example.com" && made.model.missedDays == 3)
        let html = AckPageView.page(made.model, in: Self.words("zh-Hans"), appName: "一键打卡")
        #expect(html.contains("张&lt;b&gt;三") && !html.contains("<b>三"))
        #expect(!html.contains("<script") && !html.contains("daughter@") && !html.contains("friend@"))
        #expect(html.contains("<form method=\"post\">") && html.contains("我去看看") && html.contains("（您）"))
        #expect(html.contains("name=\"going\" value=\"yes\""))
        #expect(html.contains("已有其他联系人正在前往查看"))
        var done = streak
        done.recipients[0].acknowledgedAt = Date(timeIntervalSince1970: 1_768_300_000)
        let after = try #require(AckPageModel.make(done, token: token, tokenText: "T", key: Self.key, today: Self.alert, zone: zone))
        #expect(!AckPageView.page(after.model, in: Self.words("en"), appName: "A").contains("<form"))
        let stranger = AckToken(userID: Self.user, alertDate: Self.alert, expiresOn: Self.alert, contactTag: Self.key.tag(contact: "x@example.com"))
        #expect(AckPageModel.make(streak, token: stranger, tokenText: "T", key: Self.key, today: Self.alert, zone: zone) == nil)
        #expect(AckPageModel.make(nil, token: token, tokenText: "T", key: Self.key, today: Self.alert, zone: zone) == nil)
        let neutral = AckPageView.neutral(in: Self.words("en"), appName: "A")
        #expect(!neutral.contains("<form") && neutral.contains("cannot be used"))
        #expect(AckPageView.contentSecurityPolicy.hasPrefix("default-src 'none'; style-src 'sha256-")
                && !AckPageView.contentSecurityPolicy.contains("unsafe"))
    }

    @Test("ACK_LISTEN parses host:port and [v6]:port", arguments: [
        ("127.0.0.1:8080", "127.0.0.1", 8080), ("[::1]:9000", "::1", 9000), ("localhost:80", "localhost", 80),
    ])
    func listen(_ text: String, _ host: String, _ port: Int) {
        #expect(AckSettings.Listen(parsing: text) == AckSettings.Listen(host: host, port: port))
    }

    @Test("the rate limit: per client, per minute, with the seconds to wait")
    func limiter() {
        let limiter = AddressLimiter(perMinute: 2)
        #expect([limiter.allow("a", now: 0), limiter.allow("a", now: 1), limiter.allow("a", now: 20.5), limiter.allow("b", now: 2)]
                == [.allowed, .allowed, .limited(retryAfter: 40), .allowed])
        #expect(limiter.allow("a", now: 59.9) == .limited(retryAfter: 1))
        #expect(limiter.allow("a", now: 61) == .allowed)
    }

    @Test("a client is an IPv4 address or an IPv6 /64; an IPv4-mapped address is its IPv4 address")
    func clients() {
        #expect(AddressLimiter.client("203.0.113.7") == "203.0.113.7")
        #expect(AddressLimiter.client("2001:db8:1:2:aaaa::1") == AddressLimiter.client("2001:db8:1:2:ffff:1:2:3"))
        #expect(AddressLimiter.client("2001:db8:1:2::1") == "20010db800010002::/64")
        #expect(AddressLimiter.client("2001:db8:1:3::1") != AddressLimiter.client("2001:db8:1:2::1"))
        #expect(AddressLimiter.client("::ffff:198.51.100.9") == "198.51.100.9")
        #expect(AddressLimiter.client("unknown") == "unknown")
        // One client rotating within its /64 is counted as one.
        let limiter = AddressLimiter(perMinute: 3)
        let answers = (1...4).map { limiter.allow("2001:db8:5:6::\(String($0, radix: 16))", now: 0) }
        #expect(answers == [.allowed, .allowed, .allowed, .limited(retryAfter: 60)])
    }

    @Test("a flood of new addresses never locks a newcomer out: the oldest windows are forgotten, memory stays bounded")
    func limiterFlood() {
        let limiter = AddressLimiter(perMinute: 5, capacity: 1_000)
        for n in 0..<50_600 { _ = limiter.allow("10.\(n >> 16).\((n >> 8) & 255).\(n & 255)", now: Double(n) / 25_300) }
        for visitor in ["198.51.100.1", "198.51.100.2", "2001:db8:9::1", "198.51.100.4", "198.51.100.5"] {
            #expect(limiter.allow(visitor, now: 2.5) == .allowed, "\(visitor)")
        }
        // A single flooder is still limited while its window is remembered.
        let flooder = AddressLimiter(perMinute: 5, capacity: 1_000)
        let counted = (1...7).map { flooder.allow("192.0.2.1", now: Double($0)) }
        #expect(counted.filter { $0 == .allowed }.count == 5)
    }

    @Test("an operator's ru/page.texts: the page in Russian for a Russian contact (lang, counts by CLDR); what the file lacks in the default's words; escaped as ever")
    func russianPage() throws {
        let root = try LanguageTemplatesTests.folder(["ru/page.texts": """
            title = {{app_name}} · Экстренный контакт
            heading = {{user_name}} не отмечается {{miss_days_text}}
            going = Я еду <сейчас>
            """])
        defer { try? FileManager.default.removeItem(at: root) }
        let texts = try TextTable(file: TextTable.page, directory: root.path, defaultLanguage: .serviceDefault)
        let tag = Self.key.tag(contact: "daughter@example.com")
        let token = AckToken(userID: Self.user, alertDate: Self.alert, expiresOn: Self.alert.adding(days: 28), contactTag: tag)
        let streak = AcknowledgementStore.Streak(
            rawName: "Аня", lastCheckIn: Self.alert.adding(days: -3), missedDaysAtAlert: 2, checkedInSince: nil,
            recipients: [.init(contact: "daughter@example.com", masked: "d***@example.com", acknowledgedAt: nil)])
        let made = try #require(AckPageModel.make(streak, token: token, tokenText: "T", key: Self.key, today: Self.alert.adding(days: 3),
                                                  zone: TimeZone(identifier: "Europe/Moscow")!))
        let language = AckLanguage.choose(contact: "ru-RU", browser: "en", user: nil, fallback: texts.defaultLanguage, available: texts.languages)
        #expect(language == LanguageTag("ru"))
        let html = AckPageView.page(made.model, in: AckText(texts: texts, language: language), appName: "A")
        #expect(html.contains("<html lang=\"ru\">") && html.contains("<title>A · Экстренный контакт</title>"))
        #expect(html.contains("<h1>Аня не отмечается 5 дней</h1>"), "\(html)")
        #expect(html.contains(">Я еду &lt;сейчас&gt;</label>"), "a text is escaped like any value")
        #expect(html.contains(">我现在去不了</label>") && html.contains("<button type=\"submit\">发送</button>"), "what ru lacks: zh-Hans, the default's")
        // The neutral page of a Russian browser: the file has no neutral texts, so the default's, in lang ru.
        let neutral = AckPageView.neutral(in: AckText(texts: texts, language: AckLanguage.choose(browser: "ru", fallback: nil, available: texts.languages)),
                                          appName: "A")
        #expect(neutral.contains("<html lang=\"ru\">") && neutral.contains("此链接无法使用"))
    }

    @Test("the page asks a question with no answer chosen: the harmless answer first, two taps to say \"I'm on it\"; a notice after an empty or negative answer")
    func question() throws {
        let tag = Self.key.tag(contact: "daughter@example.com")
        let token = AckToken(userID: Self.user, alertDate: Self.alert, expiresOn: Self.alert.adding(days: 28), contactTag: tag)
        let streak = AcknowledgementStore.Streak(
            rawName: "张三", lastCheckIn: Self.alert.adding(days: -3), missedDaysAtAlert: 2, checkedInSince: nil,
            recipients: [.init(contact: "daughter@example.com", masked: "d***@example.com", acknowledgedAt: nil)])
        let made = try #require(AckPageModel.make(streak, token: token, tokenText: "T", key: Self.key, today: Self.alert,
                                                  zone: TimeZone(identifier: "Asia/Shanghai")!))
        for language in Self.shipped.map(\.identifier).map(Self.words) {
            let html = AckPageView.page(made.model, in: language, appName: "A")
            let radios = html.components(separatedBy: "type=\"radio\"").dropFirst()
            #expect(radios.count == 2 && radios.allSatisfy { !$0.prefix(80).contains("checked") }, "no answer chosen")
            let no = try #require(html.range(of: "value=\"no\"")), yes = try #require(html.range(of: "value=\"yes\""))
            #expect(no.lowerBound < yes.lowerBound, "the answer that records nothing comes first")
            #expect(!html.contains("class=\"note\""))
            #expect(AckPageView.page(made.model, in: language, appName: "A", notice: .chooseOne).contains("class=\"note\""))
        }
        #expect(AckPageView.page(made.model, in: Self.words("en"), appName: "A", notice: .notRecorded).contains("nothing was recorded"))
    }

    @Test("recipients whose masks are equal are told apart: the last character of the local part, then their order")
    func distinctMasks() {
        func recipient(_ address: String) -> AcknowledgementStore.Recipient {
            .init(contact: address, masked: EmailMasking.mask(address), acknowledgedAt: nil)
        }
        let shown = AckPageModel.distinct(["ma@example.com", "mb@example.com", "mxa@example.com", "n@example.com", "m@example.org"]
            .map(recipient))
        #expect(shown == ["m***a@example.com #1", "m***b@example.com", "m***a@example.com #2", "n***@example.com", "m***@example.org"])
        #expect(Set(shown).count == shown.count)
    }

    @Test("the descriptor budget: the page's cap and the reserve must fit the soft limit; the soft limit is raised towards the hard one, at most 65,536")
    func descriptors() {
        #expect(DescriptorBudget.problem(maxConnections: 256, limit: .init(soft: 1024, hard: 1024)) == nil)
        #expect(DescriptorBudget.problem(maxConnections: 768, limit: .init(soft: 1024, hard: 1024)) == nil)
        let problem = DescriptorBudget.problem(maxConnections: 769, limit: .init(soft: 1024, hard: 4096))
        #expect(problem?.contains("lower ACK_MAX_CONNECTIONS to at most 768") == true, "\(problem ?? "nil")")
        #expect(DescriptorBudget.wanted(.init(soft: 1024, hard: 524_288)) == 65_536)
        #expect(DescriptorBudget.wanted(.init(soft: 1024, hard: 4096)) == 4096)
        #expect(DescriptorBudget.wanted(.init(soft: 100_000, hard: 200_000)) == 100_000)
        // The reserve grows with what the daemon may hold beside the page.
        var configuration = NotifierConfiguration()
        #expect(DescriptorBudget.reserve(for: configuration) == 256)
        configuration.smtp.connections = 64
        let sessions = DatabaseSessions(configuration).daemonDirect
        #expect(DescriptorBudget.reserve(for: configuration) == sessions + 256 + 64 && sessions > 100)
    }
}
