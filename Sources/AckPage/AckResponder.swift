import Acknowledgement
import Config
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import Store
import Systemd
import Texts
import Values

/// The request context: Hummingbird's, with the client's address.
struct AckContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The peer's IP address (the proxy's, behind one).
    let peer: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress
    }

    var maxUploadSize: Int { AckPageServer.maximumBody }
}

/// Answers the page's requests (see `AckPageServer`).
struct AckResponder: HTTPResponder {
    typealias Context = AckContext

    let configuration: NotifierConfiguration
    let logger: Logger
    let key: AckKey
    let limiter: AddressLimiter
    let database: AckDatabase
    /// The page's texts in every language it is written in (`page.texts`), as the daemon last
    /// loaded them (at start, and on each reload); their default language is the page's last
    /// choice before simplified Chinese.
    let texts: @Sendable () -> TextTable

    init(configuration: NotifierConfiguration, texts: @escaping @Sendable () -> TextTable, logger: Logger) {
        self.configuration = configuration
        self.texts = texts
        self.logger = logger
        key = AckKey(secret: configuration.ack!.secret)
        limiter = AddressLimiter(perMinute: configuration.ack!.rateLimitPerMinute)
        database = AckDatabase(configuration: configuration)
    }

    /// A streak's page as its reader sees it: what it shows, whose link it is, and the language
    /// it is written in for that reader.
    typealias Found = (model: AckPageView.Model, reader: AcknowledgementStore.Recipient, words: AckText)

    func respond(to request: Request, context: AckContext) async throws -> Response {
        // Until the link names a contact, the browser's language (the neutral page, a limit).
        let texts = texts()
        let words = AckText(texts: texts, language: AckLanguage.choose(browser: request.headers[.acceptLanguage],
                                                                     fallback: texts.defaultLanguage, available: texts.languages))
        let path = request.uri.path
        if path == "/healthz" { return Self.plain(.ok, "ok\n", words.language) }
        if case .limited(let retryAfter) = limiter.allow(Self.client(request, peer: context.peer), now: ProcessInfo.processInfo.systemUptime) {
            var response = neutral(.tooManyRequests, words)
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        let tokenText = String(path.split(separator: "/").last ?? "")
        switch request.method {
        case .get, .head:
            return try await show(tokenText, browser: request.headers[.acceptLanguage], words: words)
        case .post:
            // A declared length over the limit is refused before any of it is read (and the
            // connection closed: the rest of the body is not waited for).
            if let declared = request.headers[.contentLength], Int(declared).map({ $0 > AckPageServer.maximumBody }) ?? true {
                return tooLarge(words)
            }
            var request = request
            let body: ByteBuffer
            do { body = try await request.collectBody(upTo: AckPageServer.maximumBody) } catch { return tooLarge(words) }
            return try await acknowledge(tokenText, form: Self.formValues(String(buffer: body)), request: request, words: words)
        default:
            var response = neutral(.methodNotAllowed, words)
            response.headers[.allow] = "GET, HEAD, POST"
            return response
        }
    }

    /// GET: the page, or the neutral page. Reads only.
    private func show(_ tokenText: String, browser: String?, words: AckText) async throws -> Response {
        guard let token = key.verify(tokenText, today: today) else { return neutral(.notFound, words) }
        guard let found = try await model(token, tokenText: tokenText, browser: browser, texts: words.texts) else {
            return neutral(.notFound, words)
        }
        return page(AckPageView.page(found.model, in: found.words, appName: configuration.appName), language: found.words.language)
    }

    /// POST: the anti-forgery field must be the page's, the request from the page's own origin,
    /// and the answer a person's ("I'm on it" chosen); then the acknowledgement is recorded once.
    private func acknowledge(_ tokenText: String, form: [String: String], request: Request, words: AckText) async throws -> Response {
        guard let token = key.verify(tokenText, today: today) else { return neutral(.notFound, words) }
        // A page of this link carries the field; a form made elsewhere cannot (nor a POST another
        // site's page makes).
        guard let field = form["form"], key.formFieldMatches(field, token: tokenText),
              Self.sameOrigin(request, base: configuration.ack?.baseURL) else {
            return neutral(.forbidden, words)
        }
        guard let found = try await model(token, tokenText: tokenText, browser: request.headers[.acceptLanguage], texts: words.texts) else {
            return neutral(.notFound, words)
        }
        if form[AckPageView.OutcomeAnswer.field] != nil {
            return try await sayOutcome(token, tokenText: tokenText, form: form, found: found)
        }
        // A program that loads the page and submits its form as found sends no answer: nothing is
        // recorded, and the page asks again. "I can't go now" records nothing either.
        switch form[AckPageView.Answer.field].flatMap(AckPageView.Answer.init(rawValue:)) {
        case nil:
            return answered(found, .chooseOne, status: .unprocessableContent)
        case .notMe:
            return answered(found, .notRecorded)
        case .going:
            break
        }
        // Nobody is asked to go once the user checked in or a contact who went said they're OK.
        if found.model.checkedInSince == nil && found.reader.acknowledgedAt == nil && found.model.outcome?.ok != true {
            let contact = found.reader.contact
            let recorded = try await database.run { db in
                try AcknowledgementStore().record(db, userID: token.userID, alertDate: token.alertDate, contact: contact)
            }
            if recorded {
                logger.notice("acknowledgement recorded for user \(token.userID): \(found.reader.masked) is on it",
                              metadata: NotifierEvent.acknowledgementRecorded.metadata.merging([
                                "user_id": "\(token.userID)", "alert_date": "\(token.alertDate)",
                                "recipient": "\(found.reader.masked)",
                              ]) { $1 })
            }
        }
        return reload(tokenText, found.words.language)
    }

    /// POST of the outcome form (the request already checked as the page's own): a person's
    /// answer — "They're OK" or "I couldn't reach them" — recorded once per streak, only from a
    /// contact who said "I'm on it"; an empty answer (a program submitting the form as found) or
    /// "No news yet" records nothing. Whatever was recorded first stands: a later answer, by
    /// anyone, changes nothing, and the page it is sent back to shows what was said.
    private func sayOutcome(_ token: AckToken, tokenText: String, form: [String: String],
                            found: Found) async throws -> Response {
        switch form[AckPageView.OutcomeAnswer.field].flatMap(AckPageView.OutcomeAnswer.init(rawValue:)) {
        case nil:
            return answered(found, .chooseOne, status: .unprocessableContent)
        case .noNews:
            return answered(found, .noNewsYet)
        case .ok, .unreachable:
            let ok = form[AckPageView.OutcomeAnswer.field] == AckPageView.OutcomeAnswer.ok.rawValue
            guard found.model.canSayOutcome else { break }
            let contact = found.reader.contact
            let recorded = try await database.run { db in
                try OutcomeStore.record(db, userID: token.userID, alertDate: token.alertDate, contact: contact,
                                        outcome: ok ? .ok : .unreachable)
            }
            if recorded {
                let said = ok ? "ok" : "unreachable"
                logger.notice("outcome recorded for user \(token.userID): \(found.reader.masked) said \(said)",
                              metadata: NotifierEvent.outcomeRecorded.metadata.merging([
                                "user_id": "\(token.userID)", "alert_date": "\(token.alertDate)",
                                "recipient": "\(found.reader.masked)", "outcome": "\(said)",
                              ]) { $1 })
            }
        }
        return reload(tokenText, found.words.language)
    }

    /// The page again after a POST that records nothing, with `notice` saying why.
    private func answered(_ found: Found, _ notice: AckPageView.Notice, status: HTTPResponse.Status = .ok) -> Response {
        page(AckPageView.page(found.model, in: found.words, appName: configuration.appName, notice: notice),
             language: found.words.language, status: status)
    }

    /// Post/Redirect/Get: a reload shows the page and posts nothing. Relative: the token itself,
    /// so it resolves to the same link whatever path the proxy serves it under.
    private func reload(_ tokenText: String, _ language: LanguageTag) -> Response {
        var response = Response(status: .seeOther, headers: Self.securityHeaders(language))
        response.headers[.location] = tokenText
        return response
    }

    /// The page's model for a verified token (nil: the neutral page), in its reader's language:
    /// the contact's own, else the browser's (`browser`, the `Accept-Language` header), else the
    /// user's, else the service's default — among the languages of `texts`.
    private func model(_ token: AckToken, tokenText: String, browser: String?, texts: TextTable) async throws -> Found? {
        let streak = try await database.run { db in
            try AcknowledgementStore().streak(db, userID: token.userID, alertDate: token.alertDate)
        }
        guard let made = AckPageModel.make(streak, token: token, tokenText: tokenText, key: key, today: today, zone: configuration.timeZone)
        else { return nil }
        let language = AckLanguage.choose(contact: made.reader.language, browser: browser, user: streak?.userLanguage,
                                          fallback: texts.defaultLanguage, available: texts.languages)
        return (made.model, made.reader, AckText(texts: texts, language: language))
    }

    private var today: CalendarDate { CalendarDate(Date(), in: configuration.timeZone) }

    private func page(_ html: String, language: LanguageTag, status: HTTPResponse.Status = .ok) -> Response {
        var headers = Self.securityHeaders(language)
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// 413, and the connection closed after it: the rest of the body is not waited for.
    private func tooLarge(_ words: AckText) -> Response {
        var response = neutral(.contentTooLarge, words)
        response.headers[.connection] = "close"
        return response
    }

    private func neutral(_ status: HTTPResponse.Status, _ words: AckText) -> Response {
        page(AckPageView.neutral(in: words, appName: configuration.appName), language: words.language, status: status)
    }

    /// Every answer's headers: the strict policy, no caching (the page changes and names a
    /// person), no referrer (the link is the key), no framing, and the language it is in.
    static func securityHeaders(_ language: LanguageTag) -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentSecurityPolicy] = AckPageView.contentSecurityPolicy
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[.contentLanguage] = language.identifier
        headers[.vary] = "Accept-Language"
        return headers
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String, _ language: LanguageTag) -> Response {
        var headers = securityHeaders(language)
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// Whether a POST comes from the page itself. `Sec-Fetch-Site`, where the browser sends it,
    /// must say so (`same-origin`, or `none` for a user's own action); an `Origin` must be the
    /// page's own — `ACK_BASE_URL`'s origin, or the request's own host — or `null`, which
    /// browsers send for a form on a page with `Referrer-Policy: no-referrer`, as this one is.
    static func sameOrigin(_ request: Request, base: String?) -> Bool {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin" && site != "none" { return false }
        guard let origin = request.headers[.origin]?.lowercased(), origin != "null" else { return true }
        if let base, let parts = URLComponents(string: base), let scheme = parts.scheme, let host = parts.host {
            let own = "\(scheme)://\(host)" + (parts.port.map { ":\($0)" } ?? "")
            if origin == own.lowercased() { return true }
        }
        guard let authority = request.head.authority?.lowercased(),
              let parts = URLComponents(string: origin), parts.scheme == "http" || parts.scheme == "https",
              let host = parts.host else { return false }
        return authority == host + (parts.port.map { ":\($0)" } ?? "")
    }

    /// The client's address for the rate limit: behind a proxy on this machine (a loopback
    /// peer), the last address of `X-Forwarded-For` — the one the proxy added; else the peer.
    static func client(_ request: Request, peer: String?) -> String {
        let peer = peer ?? "unknown"
        guard peer == "127.0.0.1" || peer == "::1" || peer.hasPrefix("::ffff:127."),
              let forwarded = request.headers[HTTPField.Name("X-Forwarded-For")!],
              let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty else { return peer }
        return String(last.prefix(64))
    }

    /// An `application/x-www-form-urlencoded` body's fields (the first of a repeated name).
    static func formValues(_ body: String) -> [String: String] {
        var values: [String: String] = [:]
        for pair in body.split(separator: "&").prefix(16) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            let name = decode(parts[0])
            if values[name] == nil { values[name] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return values
    }
}
