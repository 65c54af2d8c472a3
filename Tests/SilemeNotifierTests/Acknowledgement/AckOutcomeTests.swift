import Foundation
import Testing
@testable import AckPage
@testable import Acknowledgement
import Store
import Values
import Webhook

/// The page's outcome form (docs/escalation.md): who is asked how it ended, the form's shape (a
/// person's answer; the one that records nothing first), what the page shows once it was said,
/// and the `checkin.outcome` event's body.
@Suite("The page's outcome buttons")
struct AckOutcomeTests {
    static let key = AckTokenTests.key
    static let alert = AckTokenTests.alert
    static let zone = TimeZone(identifier: "Asia/Shanghai")!
    static let pressedAt = Date(timeIntervalSince1970: 1_768_300_000)

    /// The streak as the daughter's page reads it: she and a friend were alerted.
    static func streak(daughterPressed: Bool, records: Bool = true, outcome: OutcomeStore.Recorded? = nil,
                       checkedIn: CalendarDate? = nil) -> AcknowledgementStore.Streak {
        AcknowledgementStore.Streak(
            rawName: "张三", lastCheckIn: alert.adding(days: -3), missedDaysAtAlert: 2, checkedInSince: checkedIn,
            recipients: [.init(contact: "daughter@example.com", masked: "d***@example.com", acknowledgedAt: daughterPressed ? pressedAt : nil),
                         .init(contact: "friend@example.com", masked: "f***@example.com", acknowledgedAt: nil)],
            recordsOutcome: records, outcome: outcome)
    }

    static func page(_ streak: AcknowledgementStore.Streak, reader: String = "daughter@example.com", language: String = "en",
                     notice: AckPageView.Notice? = nil) throws -> (html: String, model: AckPageView.Model) {
        let token = AckToken(userID: AckTokenTests.user, alertDate: alert, expiresOn: alert.adding(days: 28), contactTag: key.tag(contact: reader))
        let made = try #require(AckPageModel.make(streak, token: token, tokenText: "T", key: key, today: alert, zone: zone))
        return (AckPageView.page(made.model, in: AckTokenTests.words(language), appName: "A", notice: notice), made.model)
    }

    @Test("after \"I'm on it\": a second question with three answers, none chosen, the one that records nothing first; in both languages")
    func form() throws {
        for language in ["zh-Hans", "en"] {
            let (html, model) = try Self.page(Self.streak(daughterPressed: true), language: language)
            #expect(model.canSayOutcome)
            let radios = html.components(separatedBy: "type=\"radio\"").dropFirst()
            #expect(radios.count == 3 && radios.allSatisfy { !$0.prefix(80).contains("checked") }, "no answer chosen")
            #expect(radios.allSatisfy { $0.contains("name=\"outcome\"") } && !html.contains("name=\"going\""))
            let none = try #require(html.range(of: "value=\"none\"")), ok = try #require(html.range(of: "value=\"ok\""))
            let unreachable = try #require(html.range(of: "value=\"unreachable\""))
            #expect(none.lowerBound < ok.lowerBound && ok.lowerBound < unreachable.lowerBound)
            #expect(html.contains("name=\"form\" value=\"\(Self.key.formField(token: "T"))\""))
            #expect(html.components(separatedBy: "<form").count == 2 && html.components(separatedBy: "<button").count == 2)
            #expect(html.contains(language == "zh-Hans" ? "TA 一切安好" : "They&#39;re OK"))
            #expect(html.contains(language == "zh-Hans" ? "我联系不上 TA" : "t reach them"))
        }
        let chooser = try Self.page(Self.streak(daughterPressed: true), notice: .chooseOne).html
        #expect(chooser.contains("class=\"note\"") && chooser.contains("Please choose"))
        #expect(try Self.page(Self.streak(daughterPressed: true), notice: .noNewsYet).html.contains("nothing was recorded"))
    }

    @Test("no outcome form for a contact who did not say \"I'm on it\", after a check-in, for a streak without its record, or once said")
    func notOffered() throws {
        let friends = try Self.page(Self.streak(daughterPressed: true), reader: "friend@example.com")
        #expect(!friends.model.canSayOutcome && !friends.html.contains("name=\"outcome\"") && friends.html.contains("name=\"going\""))
        #expect(try !Self.page(Self.streak(daughterPressed: false)).model.canSayOutcome)
        let back = try Self.page(Self.streak(daughterPressed: true, checkedIn: Self.alert))
        #expect(!back.model.canSayOutcome && !back.html.contains("<form"))
        #expect(try !Self.page(Self.streak(daughterPressed: true, records: false)).model.canSayOutcome)
        let said = OutcomeStore.Recorded(kind: .unreachable, contact: "daughter@example.com", at: Self.pressedAt)
        let done = try Self.page(Self.streak(daughterPressed: true, outcome: said))
        #expect(!done.model.canSayOutcome && !done.html.contains("<form"))
        #expect(done.html.contains("You said at 2026-01-13 18:26 that you couldn&#39;t reach them"))
    }

    @Test("what was said is shown to every contact, masked: \"They're OK\" leaves nobody a form; \"I couldn't reach them\" asks the others again")
    func shown() throws {
        let ok = OutcomeStore.Recorded(kind: .ok, contact: "daughter@example.com", at: Self.pressedAt)
        let friendOK = try Self.page(Self.streak(daughterPressed: true, outcome: ok), reader: "friend@example.com", language: "zh-Hans")
        #expect(friendOK.html.contains("d***@example.com 已于 2026-01-13 18:26 告知：TA 一切安好。"))
        #expect(!friendOK.html.contains("<form") && !friendOK.html.contains("daughter@"))
        let unreachable = OutcomeStore.Recorded(kind: .unreachable, contact: "daughter@example.com", at: Self.pressedAt)
        let friendAgain = try Self.page(Self.streak(daughterPressed: true, outcome: unreachable), reader: "friend@example.com")
        #expect(friendAgain.html.contains("d***@example.com said at 2026-01-13 18:26 that they couldn&#39;t reach them"))
        #expect(friendAgain.html.contains("name=\"going\"") && !friendAgain.html.contains("name=\"outcome\""))
    }

    @Test("checkin.outcome's body: the streak's alert date, what was said, who (masked) and when")
    func webhookBody() throws {
        var payload = WebhookEvent.Payload(userID: AckTokenTests.user, userName: "张三", runDate: Self.alert.adding(days: 1),
                                           lastCheckInDate: Self.alert.adding(days: -3), missDays: 3,
                                           contacts: [WebhookEvent.Contact(email: "daughter@example.com", position: 1)])
        payload.alertDate = Self.alert
        payload.outcome = WebhookEvent.Outcome(kind: "unreachable", by: "d***@example.com", at: Self.pressedAt)
        let event = try WebhookEvent(type: .outcome, id: "msg_1", timestamp: Self.pressedAt, payload: payload)
        #expect(event.jsonBody.hasPrefix("{\"type\":\"checkin.outcome\""))
        #expect(event.dataJSON.hasSuffix(",\"alert_date\":\"2026-01-13\",\"outcome\":\"unreachable\",\"outcome_by\":\"d***@example.com\","
                                         + "\"outcome_at\":\"2026-01-13T10:26:40Z\"}"), "\(event.dataJSON)")
    }
}
