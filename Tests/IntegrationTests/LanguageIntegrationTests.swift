import Foundation
import Testing
import Values

/// Each contact's language on the real servers (docs/languages.md): what `check` says of the
/// languages and their fallbacks, and a default with no templates refused at start.
@Suite("Languages", .enabled(if: TestEnvironment.enabled))
struct LanguageIntegrationTests {
    /// A TEMPLATE_DIR with the shipped languages copied and a Russian folder holding the alert only.
    static func templates() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sn-lang-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: TestEnvironment.root.appendingPathComponent("config/templates"), to: root)
        let russian = root.appendingPathComponent("ru")
        try FileManager.default.createDirectory(at: russian, withIntermediateDirectories: true)
        try "[{{app_name}}] {{user_name}} не отмечается\n".write(to: russian.appendingPathComponent("subject.mustache"), atomically: true, encoding: .utf8)
        try "{{user_name}} не отмечается {{miss_days_text}}.\n".write(to: russian.appendingPathComponent("body.txt.mustache"), atomically: true, encoding: .utf8)
        return root
    }

    /// 王秀英, who last checked in on `lastCheckIn`, with `contacts` in this order: each a local part
    /// of the test's mailbox and the language the app stored for it (nil: none).
    static func user(_ db: TestDatabase, _ mail: Mailbox, lastCheckIn: String, contacts: [(String, String?)]) throws -> String {
        let user = try db.addUser(name: "王秀英", email: mail.address("first"), checkIns: [lastCheckIn])
        for (position, (local, language)) in contacts.enumerated() {
            try db.query("INSERT INTO emergency_contacts (user_id, email, position, language) VALUES ($1, $2, $3, $4)",
                         [user, mail.address(local), String(position + 1), language])
        }
        return user
    }

    /// The three readers of the story: a son in English, a neighbour in traditional Chinese, a carer
    /// who chose none.
    static let threeReaders: [(String, String?)] = [("son", "en"), ("neighbour", "zh-Hant-TW"), ("carer", nil)]

    /// The alerts of `alertDate` sent with the page's links, and a daemon serving the page on a free
    /// port (the caller stops it): the environment (`extra` added), the page's base URL, its port,
    /// the link in the alert to each contact (by local part), and the daemon.
    static func servingPages(_ db: TestDatabase, _ mail: Mailbox, alertDate: CalendarDate, _ extra: [String: String] = [:]) throws
        -> (env: [String: String], base: String, port: Int, link: (String) throws -> String, daemon: (Process, Pipe, Pipe)) {
        let port = try PostgresCluster.freePort()
        let base = "http://127.0.0.1:\(port)/ack"
        let env = try NotifierProcess.environment(database: db, [
            "ACK_BASE_URL": base, "ACK_SECRET": AcknowledgementIntegrationTests.secret, "ACK_LISTEN": "127.0.0.1:\(port)",
            "INTRODUCE_CONTACTS": "off",
        ].merging(extra) { $1 })
        #expect(try NotifierProcess.run(["--run-now", "--date", alertDate.description], environment: env).status == 0)
        let sent = try mail.deliveries()
        let link = { (local: String) throws -> String in
            try AcknowledgementIntegrationTests.link(in: try #require(sent.first { $0.recipient == mail.address(local) }), base: base)
        }
        let daemon = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, env)
        #expect(DaemonIntegrationTests.eventually(20) { (try? AcknowledgementIntegrationTests.http("http://127.0.0.1:\(port)/healthz").status) == 200 })
        return (env, base, port, link, daemon)
    }

    @Test("check lists each language, where its templates come from, the default, and what falls back; and that no row asks for one")
    func checkListsLanguages() throws {
        let db = try TestDatabase()
        let folder = try Self.templates()
        defer { try? FileManager.default.removeItem(at: folder) }
        let env = try NotifierProcess.environment(database: db, ["TEMPLATE_DIR": folder.path])
        let check = try NotifierProcess.run(["check"], environment: env)
        let output = check.stdout + check.stderr
        #expect(check.status == 0, "\(output)")
        #expect(output.contains("ok   languages: en from TEMPLATE_DIR, ru from TEMPLATE_DIR, zh-Hans (default) from TEMPLATE_DIR, "
                                + "zh-Hant from TEMPLATE_DIR; falls back: ru all_clear → zh-Hans, ru follow_up → zh-Hans"), "\(output)")
        #expect(output.contains(" → zh-Hans, ru page → zh-Hans\n"), "a folder without page.texts: its page falls back too")
        let builtIn = try NotifierProcess.run(["check"], environment: NotifierProcess.environment(database: db, ["DEFAULT_LANGUAGE": "en"]))
        #expect((builtIn.stdout + builtIn.stderr).contains("ok   languages: en (default), zh-Hans, zh-Hant\n"), "\(builtIn.stdout)")
        #expect((builtIn.stdout + builtIn.stderr).contains("ok   languages asked for: none: every contact is written to in en (the default)\n"))
    }

    @Test("DEFAULT_LANGUAGE with no templates, or not a language: refused at start with exit 78, naming it")
    func defaultWithoutTemplates() throws {
        let db = try TestDatabase()
        for (value, words) in [("fr", "no templates in fr"), ("klingon!", "is not a language tag")] {
            let env = try NotifierProcess.environment(database: db, ["DEFAULT_LANGUAGE": value])
            let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
            #expect(run.status == 78 && run.stderr.contains("DEFAULT_LANGUAGE") && run.stderr.contains(words), "\(run.stderr)")
        }
    }

    @Test("three contacts (en, zh-Hant-TW, none): each alert and all-clear in its reader's language, headers encoded for each script, each contact's language on the webhook; a user in Russian without Russian templates gets the default")
    func eachInTheirOwn() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let user = try Self.user(db, mail, lastCheckIn: "2026-01-10", contacts: Self.threeReaders)
        let russian = try db.addUser(name: "Ольга", email: mail.address("olga-contact"), checkIns: ["2026-01-10"])
        try db.query("UPDATE users SET language = 'ru' WHERE id = $1", [russian])
        let secret = WebhookTransportIntegrationTests.secret()
        let receiver = try WebhookReceiver(secret: secret)
        defer { receiver.stop() }
        let env = try WebhookDeliveryIntegrationTests.environment(db, receiver, secret: secret, ["WEBHOOK_EVENTS": "checkin.alert,checkin.all_clear"])
        // `check` says which languages the rows ask for, and who falls back to which.
        let check = try NotifierProcess.run(["check"], environment: env)
        #expect((check.stdout + check.stderr).contains(
            "warn languages asked for: en (1 contact); ru (1 user) → zh-Hans: no templates in it; zh-Hant-TW (1 contact) → zh-Hant\n"),
            "\(check.stdout)\(check.stderr)")
        // The dry run says in which language each contact will read, and why one falls back.
        let plan = try NotifierProcess.run(["--run-now", "--dry-run", "--format", "json", "--date", "2026-01-13"], environment: env)
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])["users"] as? [[String: Any]]
        func planned(_ of: String) -> [[String?]] {
            let contacts = listed?.first { $0["user_id"] as? String == of }?["contacts"] as? [[String: Any]] ?? []
            return contacts.map { [$0["language"] as? String, $0["language_fallback"] as? String] }
        }
        #expect(planned(user) == [["en", nil], ["zh-Hant", nil], ["zh-Hans", nil]], "\(plan.stdout.prefix(1500))")
        #expect(planned(russian) == [["zh-Hans", "no templates in ru"]])

        let run = try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env)
        #expect(run.status == 0, "\(run.stderr.suffix(800))")
        // The app's gateway hears each contact's language with the signed event.
        func languages(_ type: String, _ of: String) throws -> [String?] {
            let event = try WebhookDeliveryIntegrationTests.delivered(receiver).last { $0.type == type && $0.data["user_id"] as? String == of }
            return ((event?.data["contacts"] as? [[String: Any]]) ?? []).map { $0["language"] as? String }
        }
        #expect(try languages("checkin.alert", user) == ["en", "zh-Hant", "zh-Hans"])
        #expect(try languages("checkin.alert", russian) == ["zh-Hans"])

        func parsed(_ local: String) throws -> [MailParser.Parsed] {
            try mail.deliveries().filter { $0.recipient == mail.address(local) }.map { try MailParser.parse($0.raw) }
        }
        let son = try #require(try parsed("son").first)
        #expect(son.headers["Subject"] == ["[一键打卡] About 王秀英's check-ins"])
        #expect(son.text?.contains("has not checked in for 2 days in a row (last check-in: January 10, 2026)") == true, "\(son.text ?? "")")
        let neighbour = try #require(try parsed("neighbour").first)
        #expect(neighbour.headers["Subject"] == ["[一键打卡] 關於 王秀英 的簽到提醒"])
        #expect(neighbour.text?.contains("已連續 2 天未在「一键打卡」應用程式中簽到（最後一次簽到：2026年1月10日）") == true, "\(neighbour.text ?? "")")
        let carer = try #require(try parsed("carer").first)
        #expect(carer.headers["Subject"] == ["[一键打卡] 关于 王秀英 的签到提醒"])
        #expect(carer.text?.contains("王秀英 已连续 2 天未在\"一键打卡\"应用中签到") == true)
        let olga = try #require(try parsed("olga-contact").first)
        #expect(olga.headers["Subject"] == ["[一键打卡] 关于 Ольга 的签到提醒"], "no Russian templates: the default")
        for message in [son, neighbour, carer, olga] {
            #expect(message.defects.isEmpty, "\(message.defects)")
        }
        // Each raw header is ASCII: the subjects of every script are encoded words.
        for delivery in try mail.deliveries() {
            let head = String(decoding: delivery.raw, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
            #expect(head.unicodeScalars.allSatisfy { $0.isASCII })
        }

        // The user checks in: each all-clear in its reader's language, threaded under its alert.
        try db.checkIn(user, "2026-01-14")
        let allClears = try NotifierProcess.run(["--run-now", "--date", "2026-01-14"], environment: env)
        #expect(allClears.status == 0, "\(allClears.stderr.suffix(800))")
        let sonAllClear = try #require(try parsed("son").last)
        #expect(sonAllClear.headers["Subject"] == ["[一键打卡] 王秀英 checked in: all is well"])
        #expect(sonAllClear.text?.contains("On January 13, 2026 we told you that they had not checked in for 2 days.") == true,
                "\(sonAllClear.text ?? "")")
        #expect(sonAllClear.headers["In-Reply-To"] == son.headers["Message-ID"])
        let neighbourAllClear = try #require(try parsed("neighbour").last)
        #expect(neighbourAllClear.headers["Subject"] == ["[一键打卡] 王秀英 已簽到，一切正常"])
        #expect(neighbourAllClear.text?.contains("我們在 2026年1月13日 曾告知您 TA 已連續 2 天未簽到") == true)
        #expect(try parsed("carer").last?.headers["Subject"] == ["[一键打卡] 王秀英 已签到，一切正常"])
        #expect(try languages("checkin.all_clear", user) == ["en", "zh-Hant", "zh-Hans"], "the lifecycle's events too")
    }

    @Test("an operator's ru/ with page.texts: the page in Russian for a Russian contact and a Russian browser, the texts the file lacks in the default's words, check lists them; an edited file is served after SIGHUP, a broken one refused")
    func pageInRussian() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let folder = try Self.templates()
        defer { try? FileManager.default.removeItem(at: folder) }
        try "{{user_name}} не отмечается {{miss_days_text}}.\n{{#ack_url}}\n{{ack_url}}\n{{/ack_url}}\n"
            .write(to: folder.appendingPathComponent("ru/body.txt.mustache"), atomically: true, encoding: .utf8)
        let texts = folder.appendingPathComponent("ru/page.texts")
        try """
            # Russian, half done: the rest comes from the default (zh-Hans)
            title = {{app_name}} · Экстренный контакт
            heading = {{user_name}} не отмечается {{miss_days_text}}
            going = Я еду
            """.write(to: texts, atomically: true, encoding: .utf8)
        let alertDate = AcknowledgementIntegrationTests.today.adding(days: -1)
        _ = try Self.user(db, mail, lastCheckIn: alertDate.adding(days: -3).description,
                          contacts: [("olga", "ru-RU"), ("son", "en"), ("carer", nil)])
        let (env, base, _, link, daemon) = try Self.servingPages(db, mail, alertDate: alertDate, ["TEMPLATE_DIR": folder.path])
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }
        let check = try NotifierProcess.run(["check"], environment: env)
        #expect((check.stdout + check.stderr).contains("ru page: heading_checked_in, checked_in, facts, you, on_it, someone_else, explain, question, not_me, send, "),
                "\(check.stdout)\(check.stderr)")

        // The Russian contact, on an English browser: her page in Russian — three days by CLDR's plural rules.
        let olga = try AcknowledgementIntegrationTests.http(try link("olga"), language: "en-GB")
        #expect(olga.status == 200 && olga.headers["content-language"] == "ru" && olga.body.contains("<html lang=\"ru\">"))
        #expect(olga.body.contains("<title>一键打卡 · Экстренный контакт</title>") && olga.body.contains("<h1>王秀英 не отмечается 3 дня</h1>")
                && olga.body.contains(">Я еду</label>"), "\(olga.body)")
        // What the file lacks: the default's words (zh-Hans), on the same page.
        #expect(olga.body.contains(">我现在去不了</label>") && olga.body.contains("<button type=\"submit\">发送</button>"))
        #expect(olga.headers["content-security-policy"]?.contains("style-src 'sha256-") == true)
        // The English contact reads English; a contact who chose none, on a Russian browser, Russian.
        #expect(try AcknowledgementIntegrationTests.http(try link("son"), language: "ru").headers["content-language"] == "en")
        let carer = try AcknowledgementIntegrationTests.http(try link("carer"), language: "ru, en;q=0.5")
        #expect(carer.headers["content-language"] == "ru" && carer.body.contains("не отмечается 3 дня"))
        // A link that names nobody, on a Russian browser: the neutral page in lang ru, its texts the default's.
        let neutral = try AcknowledgementIntegrationTests.http("\(base)/i/not-a-token", language: "ru")
        #expect(neutral.status == 404 && neutral.headers["content-language"] == "ru" && neutral.body.contains("此链接无法使用"))

        // The translator adds a text and the operator reloads: the page says it.
        try (String(contentsOf: texts, encoding: .utf8) + "\nsend = Отправить\n").write(to: texts, atomically: true, encoding: .utf8)
        kill(daemon.0.processIdentifier, SIGHUP)
        #expect(DaemonIntegrationTests.eventually(20) {
            (try? AcknowledgementIntegrationTests.http(try link("olga")).body.contains("<button type=\"submit\">Отправить</button>")) == true
        }, "the edited page.texts after SIGHUP")
        // A broken file is refused on reload; the page keeps the texts it had.
        try "send Отправить\n".write(to: texts, atomically: true, encoding: .utf8)
        kill(daemon.0.processIdentifier, SIGHUP)
        Thread.sleep(forTimeInterval: 2)
        #expect(try AcknowledgementIntegrationTests.http(try link("olga")).body.contains(">Я еду</label>"))
        kill(daemon.0.processIdentifier, SIGTERM)
        let finished = NotifierProcess.finish(daemon.0, daemon.1, daemon.2)
        #expect(finished.status == 0)
        if TestEnvironment.current?.journal == true {
            let entries = try JournalReader.entries(of: finished, minimum: 3)
            #expect(entries.contains { $0["MESSAGE"]?.contains("configuration reload refused") == true
                && $0["MESSAGE"]?.contains("ru/page.texts, line 1: not name = text") == true }, "the refusal names the file and the line")
        }
    }

    @Test("the acknowledgement page in each reader's language: the contact's first, then the browser's, then the user's, then the service's default; the neutral page in the browser's")
    func pageInEachLanguage() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        let alertDate = AcknowledgementIntegrationTests.today.adding(days: -1)
        let user = try Self.user(db, mail, lastCheckIn: alertDate.adding(days: -3).description, contacts: Self.threeReaders)
        let (env, base, port, link, daemon) = try Self.servingPages(db, mail, alertDate: alertDate)
        defer { if daemon.0.isRunning { kill(daemon.0.processIdentifier, SIGKILL) } }

        /// The page of `local`'s link as a browser asking for `browser` gets it: its language, and the page.
        func page(_ local: String, browser: String) throws -> (language: String?, body: String) {
            let got = try AcknowledgementIntegrationTests.http(try link(local), language: browser)
            #expect(got.status == 200)
            return (got.headers["content-language"], got.body)
        }
        // The alert was yesterday, after two missed days: today's page counts three. A browser asking
        // for simplified Chinese: the contacts who chose a language read theirs.
        let son = try page("son", browser: "zh-CN,zh;q=0.9")
        #expect(son.language == "en" && son.body.contains("has not checked in for 3 days") && son.body.contains("I&#39;m on it"),
                "\(son.body.prefix(600))")
        let neighbour = try page("neighbour", browser: "zh-CN,zh;q=0.9")
        #expect(neighbour.language == "zh-Hant" && neighbour.body.contains("<html lang=\"zh-Hant\">"))
        #expect(neighbour.body.contains("王秀英 已連續 3 天未簽到") && neighbour.body.contains("緊急聯絡人") && neighbour.body.contains("送出"),
                "\(neighbour.body.prefix(600))")
        #expect(!neighbour.body.contains("联系人") && !neighbour.body.contains("签到"), "no simplified characters on the traditional page")
        // The carer chose none: the browser's, whichever of the three it asks for.
        let carer = try page("carer", browser: "zh-CN,zh;q=0.9")
        #expect(carer.language == "zh-Hans" && carer.body.contains("王秀英 已连续 3 天未签到"))
        #expect(try page("carer", browser: "zh-HK, en;q=0.5").language == "zh-Hant")
        #expect(try page("carer", browser: "en-GB").language == "en")
        // A browser asking for none of them: the user's language, when the app stored one.
        #expect(try page("carer", browser: "de").language == "zh-Hans", "neither: the service's default")
        try db.query("UPDATE users SET language = 'en-AU' WHERE id = $1", [user])
        #expect(try page("carer", browser: "de").language == "en")
        #expect(try page("carer", browser: "zh-TW").language == "zh-Hant", "the browser's before the user's")
        // The link's own contact decides, not what another contact chose.
        #expect(try page("son", browser: "zh-TW").language == "en")
        // A link that names nobody: the neutral page in the browser's language.
        let neutral = try AcknowledgementIntegrationTests.http("\(base)/i/not-a-token", language: "zh-TW")
        #expect(neutral.status == 404 && neutral.headers["content-language"] == "zh-Hant" && neutral.body.contains("此連結無法使用"))
        kill(daemon.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(daemon.0, daemon.1, daemon.2).status == 0)

        // A service set up in English before languages (TEMPLATE_DIR=…/templates/en, no
        // DEFAULT_LANGUAGE): English is its default for the page too.
        try db.query("UPDATE users SET language = NULL WHERE id = $1", [user])
        var english = env
        english["TEMPLATE_DIR"] = TestEnvironment.root.appendingPathComponent("config/templates/en").path
        let second = try LifecycleIntegrationTests.startDaemonWithoutDailyRun(db, english)
        defer { if second.0.isRunning { kill(second.0.processIdentifier, SIGKILL) } }
        #expect(DaemonIntegrationTests.eventually(20) { (try? AcknowledgementIntegrationTests.http("http://127.0.0.1:\(port)/healthz").status) == 200 })
        #expect(try page("carer", browser: "de").language == "en")
        #expect(try page("carer", browser: "zh-CN").language == "zh-Hans", "the browser's before the default")
        kill(second.0.processIdentifier, SIGTERM)
        #expect(NotifierProcess.finish(second.0, second.1, second.2).status == 0)
    }

    @Test("retry --dry-run shows the language each failed mail will be written in, and why one falls back; the retried mail is in it")
    func retryShowsLanguages() throws {
        let db = try TestDatabase()
        let mail = try Mailbox()
        _ = try Self.user(db, mail, lastCheckIn: "2026-01-10", contacts: [
            ("son-temp451once", "en"), ("neighbour-perm550", "zh-Hant-TW"), ("friend-perm550", "ru"), ("carer", nil),
        ])
        let env = try NotifierProcess.environment(database: db, ["SMTP_RETRY_ATTEMPTS": "1", "INTRODUCE_CONTACTS": "off"])
        #expect(try NotifierProcess.run(["--run-now", "--date", "2026-01-13"], environment: env).status == 75)

        let plan = try NotifierProcess.run(["retry", "--date", "2026-01-13", "--dry-run", "--json"], environment: env)
        #expect(plan.status == 0, "\(plan.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["retry"] as? [[String: Any]])
        let languages = Dictionary(uniqueKeysWithValues: rows.map {
            (($0["recipient"] as? String ?? "").prefix(2), [$0["language"] as? String, $0["language_fallback"] as? String])
        })
        #expect(languages == ["s*": ["en", nil], "n*": ["zh-Hant", nil], "f*": ["zh-Hans", "no templates in ru"]], "\(plan.stdout)")
        let table = try NotifierProcess.run(["retry", "--date", "2026-01-13", "--dry-run"], environment: env)
        #expect(table.stdout.contains("LANG") && table.stdout.contains("  zh-Hant  "), "\(table.stdout)")
        #expect(table.stdout.contains("f***@") && table.stdout.contains(": no templates in ru → zh-Hans\n"), "\(table.stdout)")

        // The retried mail is written in the language the plan said.
        #expect(try NotifierProcess.run(["retry", "--date", "2026-01-13"], environment: env).status == 0)
        let son = try #require(try mail.deliveries().last { $0.recipient == mail.address("son-temp451once") })
        #expect(try MailParser.parse(son.raw).headers["Subject"] == ["[一键打卡] About 王秀英's check-ins"])
    }

    @Test("migrate adds the language of users and contacts, nullable, for the app to write")
    func columns() throws {
        let db = try TestDatabase()
        let columns = try db.query("""
            SELECT table_name::text, is_nullable::text, data_type::text FROM information_schema.columns
            WHERE table_schema = 'public' AND column_name = 'language' ORDER BY table_name
            """)
        #expect(columns == [["emergency_contacts", "YES", "text"], ["users", "YES", "text"]])
    }
}
