import Bounce
import Config
import Foundation
import Store
import Testing
import Values
@testable import Delivery

/// The canary's decisions (docs/operating.md, "The canary"), pure: its tag, what a mailbox message
/// about it is, when a relay is due one, when one is lost, and what `check` says.
@Suite("Canary decisions")
struct CanaryDecisionTests {
    static let tags = BounceDecisionTests.tags
    static let settings = CanarySettings(every: .seconds(3600), address: try! EmailAddress(validating: "bounces+canary@notify.sileme.test"),
                                         within: .seconds(600))

    @Test("a canary's tag verifies as a canary's only: never as a row's, and a row's never as a canary's")
    func tags() {
        let tag = Self.tags.canaryTag(id: 7)
        #expect(Self.tags.canary(tag: tag) == 7)
        #expect(Self.tags.canary(tag: " \(tag)\t") == 7)
        #expect(Self.tags.row(tag: tag) == nil)
        #expect(Self.tags.canary(tag: Self.tags.tag(row: 7)) == nil)
        #expect(Self.tags.canary(in: Self.tags.canarySender(id: 7)) == 7)
        #expect(Self.tags.row(in: Self.tags.canarySender(id: 7)) == nil)
        let other = BounceTag(address: Self.tags.address, secret: Secret("another-key-0123456789abcdef0123456789"))
        #expect(other.canary(tag: tag) == nil)
        #expect(Self.tags.canary(tag: String(tag.dropLast()) + (tag.last == "a" ? "b" : "a")) == nil)
    }

    @Test("the canary itself: back and removed, whatever else it looks like; a forged tag is kept aside and changes nothing")
    func canaryBack() {
        let message = BounceReport.read(CanarySender.message(id: 9, tag: Self.tags.canaryTag(id: 9), relay: "smtp://relay:25",
                                                             from: "noreply@notify.sileme.test", to: "bounces+canary@notify.sileme.test",
                                                             now: Date(timeIntervalSince1970: 1_800_000_000)))
        #expect(message.canaryTag == Self.tags.canaryTag(id: 9))
        let key = BounceReader.key(of: message, tags: Self.tags)
        #expect(key == .canary(id: 9))
        #expect(BounceReader.decide(message, key: key, delivery: nil) == .canaryBack(id: 9))
        var forged = message
        forged.canaryTag = Self.tags.tag(row: 9)  // a row's tag is no canary's
        #expect(BounceReader.key(of: forged, tags: Self.tags) == .forgedCanary)
        #expect(BounceReader.decide(forged, key: .forgedCanary, delivery: nil) == .unmatched(.forgedTag))
    }

    @Test("a report to a canary's sender: permanent marks it lost with its status; a delay or success changes nothing; never a row's bounce")
    func reportAboutCanary() {
        let sender = Self.tags.canarySender(id: 11)
        let permanent = BounceDecisionTests.report(.permanent, to: [sender], messageID: BounceDecisionTests.messageID,
                                                   recipient: "bounces+canary@notify.sileme.test", status: "5.7.1")
        let key = BounceReader.key(of: permanent, tags: Self.tags)
        #expect(key == .canaryReport(id: 11))
        #expect(BounceReader.decide(permanent, key: key, delivery: BounceDecisionTests.row) == .canaryBounced(id: 11, status: "5.7.1"))
        #expect(BounceReader.decide(BounceDecisionTests.report(.transient, to: [sender]), key: key, delivery: nil) == .remove)
        #expect(BounceReader.decide(BounceDecisionTests.report(.delivered, to: [sender]), key: key, delivery: nil) == .remove)
        #expect(BounceReader.decide(BounceReport(verdict: .unparsed, addressedTo: [sender]), key: key, delivery: nil) == .setAside(.unparsed))
    }

    @Test("a relay is due a canary once a period, the same period for every daemon")
    func due() {
        let every = Duration.seconds(3600)
        let now = Date(timeIntervalSince1970: 1_800_001_234)
        let period = CanaryPlan.period(of: now, every: every)
        #expect(period == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(CanaryPlan.due(lastClaimed: nil, now: now, every: every) == period)
        #expect(CanaryPlan.due(lastClaimed: period, now: now.addingTimeInterval(100), every: every) == nil)
        #expect(CanaryPlan.due(lastClaimed: period, now: period.addingTimeInterval(3600), every: every) == period.addingTimeInterval(3600))
    }

    @Test("a canary is lost once CANARY_WITHIN has passed without it")
    func lost() {
        let sent = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(!CanaryPlan.isLost(sentAt: sent, now: sent.addingTimeInterval(599), within: .seconds(600)))
        #expect(CanaryPlan.isLost(sentAt: sent, now: sent.addingTimeInterval(600), within: .seconds(600)))
        let open = [CanaryStore.Open(id: 1, relay: "a", sentAt: sent), CanaryStore.Open(id: 2, relay: "b", sentAt: sent.addingTimeInterval(300))]
        #expect(CanaryPlan.lost(open, now: sent.addingTimeInterval(700), within: .seconds(600)).map(\.id) == [1])
    }

    @Test("check: the latest lost fails; none back within CANARY_EVERY + CANARY_WITHIN fails; none sent yet warns; back passes")
    func health() {
        let now = Date(timeIntervalSince1970: 1_800_010_000)
        #expect(CanaryPlan.health(nil, now: now, settings: Self.settings) == .noneYet)
        var figures = CanaryStore.Figures(relay: "smtp://relay:25")
        figures.firstSentAt = now.addingTimeInterval(-100)
        figures.sent = 1
        #expect(CanaryPlan.health(figures, now: now, settings: Self.settings) == .noneYet)
        figures.lastBackAt = now.addingTimeInterval(-90)
        figures.lastLatency = 10
        #expect(CanaryPlan.health(figures, now: now, settings: Self.settings) == .back(latency: 10, at: now.addingTimeInterval(-90)))
        #expect(!CanaryPlan.health(figures, now: now, settings: Self.settings).fails)
        #expect(CanaryPlan.health(figures, now: now.addingTimeInterval(4200), settings: Self.settings).fails)
        figures.latestLost = "not_back"
        #expect(CanaryPlan.health(figures, now: now, settings: Self.settings) == .lost(reason: "not_back"))
        figures = CanaryStore.Figures(relay: "smtp://relay:25")
        figures.firstSentAt = now.addingTimeInterval(-4201)
        #expect(CanaryPlan.health(figures, now: now, settings: Self.settings) == .overdue(since: now.addingTimeInterval(-4201)))
    }

    @Test("the metrics file: per relay, canaries sent and lost, the last latency and when it came back; nothing before the first")
    func metrics() {
        var figures = Housekeeping.Figures()
        #expect(!MetricsFile.render(figures, now: Date()).contains("canary"))
        var relay = CanaryStore.Figures(relay: "smtp://relay.example:587")
        relay.sent = 4
        relay.back = 3
        relay.lost = 1
        relay.lastLatency = 12.5
        relay.lastBackAt = Date(timeIntervalSince1970: 1_800_000_000)
        figures.canaries = [relay, CanaryStore.Figures(relay: "smtp://dropping.example:587")]
        let text = MetricsFile.render(figures, now: Date())
        for line in ["sileme_notifier_canary_sent_total{relay=\"smtp://relay.example:587\"} 4",
                     "sileme_notifier_canary_lost_total{relay=\"smtp://relay.example:587\"} 1",
                     "sileme_notifier_canary_lost_total{relay=\"smtp://dropping.example:587\"} 0",
                     "sileme_notifier_canary_latency_seconds{relay=\"smtp://relay.example:587\"} 12.500",
                     "sileme_notifier_canary_back_timestamp_seconds{relay=\"smtp://relay.example:587\"} 1800000000",
                     "# TYPE sileme_notifier_canary_lost_total counter"] {
            #expect(text.contains(line + "\n"), "\(line): \(text)")
        }
        #expect(!text.contains("canary_latency_seconds{relay=\"smtp://dropping.example:587\"}"), "no latency for a relay none came back through")
    }
}
