import Config
import Testing
import Values
@testable import Admin

/// `check` as a list of parts (docs/architecture.md, `Admin`): `run` walks the list it is given,
/// each part that applies contributes its lines in the list's order, and the lines' failures make
/// the exit status — without a server.
@Suite("check's parts")
struct HealthCheckPartsTests {
    typealias Part = HealthCheck.Part
    typealias Finding = HealthCheck.Finding

    /// A part that says `subject` when `applies`.
    static func part(_ subject: String, applies: Bool = true, ok: Bool = true) -> Part {
        Part(when: { _ in applies }, lines: { _ in [Finding(subject: subject, ok: ok, detail: "")] })
    }

    @Test("run walks the list: a part that does not apply contributes no line, and its failure no status")
    func walks() {
        let check = HealthCheck(configuration: NotifierConfiguration())
        let (findings, status) = check.run([Self.part("first"), Self.part("skipped", applies: false, ok: false), Self.part("last")])
        #expect(findings.map(\.subject) == ["first", "last"])
        #expect(status == .success)
        #expect(check.run([]).findings.isEmpty)
    }

    @Test("a part's lines can read what an earlier part left in the context")
    func shares() {
        let loads = Part(lines: { context in
            context.acknowledgements = "3 acknowledgements"
            return []
        })
        let says = Part(lines: { context in [Finding(subject: "page", ok: true, detail: context.acknowledgements ?? "none")] })
        let check = HealthCheck(configuration: NotifierConfiguration())
        #expect(check.run([says, loads, says]).findings.map(\.detail) == ["none", "3 acknowledgements"])
    }

    @Test("the exit status: a configuration problem (78) over any other, else the first failure, warnings none")
    func status() {
        let warned = Finding(subject: "w", ok: true, warning: true, detail: "", failure: .unavailable)
        let unreachable = Finding(subject: "u", ok: false, detail: "", failure: .unavailable)
        let failed = Finding(subject: "f", ok: false, detail: "")
        let misconfigured = Finding(subject: "c", ok: false, detail: "", failure: .configuration)
        #expect(HealthCheck.status([warned]) == .success)
        #expect(HealthCheck.status([warned, unreachable, failed]) == .unavailable)
        #expect(HealthCheck.status([failed, unreachable]) == .failure)
        #expect(HealthCheck.status([unreachable, misconfigured, failed]) == .configuration)
    }

    @Test("the outbox is checked instead of the relays and their canaries; the configured parts apply")
    func applies() {
        var smtp = NotifierConfiguration()
        smtp.canary = CanarySettings(every: .seconds(3600), address: try! EmailAddress(validating: "bounces+canary@notify.sileme.test"))
        var outbox = smtp
        outbox.mailTransport = .outbox
        outbox.outboxDirectory = "/tmp/outbox"
        #expect(Part.relays.applies(to: smtp) && Part.canary.applies(to: smtp) && !Part.outbox.applies(to: smtp))
        #expect(!Part.relays.applies(to: outbox) && !Part.canary.applies(to: outbox) && Part.outbox.applies(to: outbox))
        let plain = NotifierConfiguration()
        for part in [Part.webhook, .ackPage, .acknowledgements, .bounceMailbox, .canary, .readDatabase] {
            #expect(!part.applies(to: plain))
        }
    }
}
