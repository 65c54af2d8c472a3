import Config
import Foundation
import Testing
@testable import Mail
import Values

/// The chain of relays (docs/delivery.md, "Fallback relays"), over scripted transports: which relay
/// a message goes to, which failures move it on, and the rests.
@Suite("Fallback relays: the chain")
struct RelayChainTests {
    /// A relay that answers from a script, recording what it was handed.
    final class Scripted: MailTransport, @unchecked Sendable {
        var answers: [SendOutcome]
        var received: [String] = []
        init(_ answers: [SendOutcome]) { self.answers = answers }
        func send(from sender: String, to recipient: String, message: [UInt8]) -> SendOutcome {
            received.append(recipient)
            return answers.count > 1 ? answers.removeFirst() : answers[0]
        }
        func hear(_ stop: StopSignal, onWait: @escaping @Sendable () -> Void) {}
    }

    static func relays(_ count: Int) -> [SMTPSettings] {
        (0..<count).map { index in
            var settings = SMTPSettings()
            settings.host = "relay\(index + 1).example"
            return settings
        }
    }

    static let down = SendOutcome.transient(reason: "curl error 7: Failed to connect", serverUnavailable: true)
    static let ok = SendOutcome.accepted(reply: "250 OK")

    /// A chain over `scripted`, with its own board and the failovers it told.
    static func chain(_ scripted: [Scripted], retry: Duration = .seconds(300)) -> (RelayChain, Locked<[RelayChain.Failover]>) {
        let told = Locked<[RelayChain.Failover]>([])
        let chain = RelayChain(relays: relays(scripted.count), retry: retry, board: RelayChain.Board(),
                               connect: { settings throws(MailError) in scripted[Int(settings.host.dropFirst(5).prefix(1))! - 1] },
                               onFailover: { failover in told.withLock { $0.append(failover) } })
        return (chain, told)
    }

    @Test("the order: relays not resting first, in their order, then the resting ones")
    func order() {
        #expect(RelayChain.order(resting: [false, false, false]) == [0, 1, 2])
        #expect(RelayChain.order(resting: [true, false, false]) == [1, 2, 0])
        #expect(RelayChain.order(resting: [true, false, true]) == [1, 0, 2])
        #expect(RelayChain.order(resting: [true, true]) == [0, 1])
    }

    @Test("a relay failure moves the message on, is told, and the relay rests: the next message starts at the next relay")
    func failsOver() {
        let (first, second) = (Scripted([Self.down]), Scripted([Self.ok]))
        let (chain, told) = Self.chain([first, second])
        #expect(chain.send(from: "a@x", to: "one@y", message: []) == Self.ok)
        #expect(chain.relay == "smtp://relay2.example:587" && chain.passedOver == ["smtp://relay1.example:587"])
        #expect(told.withLock { $0 } == [RelayChain.Failover(from: "smtp://relay1.example:587", to: "smtp://relay2.example:587",
                                                             reason: "curl error 7: Failed to connect")])
        #expect(chain.send(from: "a@x", to: "two@y", message: []) == Self.ok)
        #expect(first.received == ["one@y"] && second.received == ["one@y", "two@y"], "the resting primary is not asked")
        #expect(chain.passedOver.isEmpty)
    }

    @Test("a refused recipient or message, or an unknown outcome, stays with the relay that answered it")
    func staysPut() {
        for answer in [SendOutcome.permanent(reply: "550 5.1.1 no such user"), .transient(reason: "451 greylisted", serverUnavailable: false),
                       .unknown(reason: "no reply after the message")] {
            let (first, second) = (Scripted([answer]), Scripted([Self.ok]))
            let (chain, told) = Self.chain([first, second])
            #expect(chain.send(from: "a@x", to: "dead@y", message: []) == answer)
            #expect(second.received.isEmpty && told.withLock { $0.isEmpty } && chain.relay == "smtp://relay1.example:587", "\(answer)")
        }
    }

    @Test("every relay failing: each is tried once, the last failure is the outcome (server unavailable), none left is told")
    func allDown() {
        let (first, second) = (Scripted([Self.down]), Scripted([Self.down]))
        let (chain, told) = Self.chain([first, second])
        #expect(chain.send(from: "a@x", to: "one@y", message: []) == Self.down)
        #expect(told.withLock { $0.map(\.to) } == ["smtp://relay2.example:587", nil])
        // Both resting: still both tried, in their order, before the message waits.
        #expect(chain.send(from: "a@x", to: "two@y", message: []) == Self.down)
        #expect(first.received == ["one@y", "two@y"] && second.received == ["one@y", "two@y"])
    }

    @Test("after SMTP_FALLBACK_RETRY the primary is tried first again; once it takes a message it is no longer passed over")
    func primaryAgain() {
        let (first, second) = (Scripted([Self.down, Self.ok]), Scripted([Self.ok]))
        let (chain, _) = Self.chain([first, second], retry: .milliseconds(300))
        _ = chain.send(from: "a@x", to: "one@y", message: [])
        _ = chain.send(from: "a@x", to: "two@y", message: [])
        #expect(first.received == ["one@y"], "resting")
        Thread.sleep(forTimeInterval: 0.4)
        #expect(chain.send(from: "a@x", to: "three@y", message: []) == Self.ok)
        #expect(chain.relay == "smtp://relay1.example:587" && first.received == ["one@y", "three@y"])
        #expect(second.received == ["one@y", "two@y"])
    }

    @Test("a relay whose connection cannot be made (libcurl refuses an option) is passed over as a relay failure")
    func cannotConnect() {
        let second = Scripted([Self.ok])
        let chain = RelayChain(relays: Self.relays(2), retry: .seconds(60), board: RelayChain.Board(),
                               connect: { settings throws(MailError) in
                                   if settings.host == "relay1.example" { throw MailError(message: "libcurl could not create a handle") }
                                   return second
                               })
        #expect(chain.send(from: "a@x", to: "one@y", message: []) == Self.ok)
        #expect(chain.passedOver == ["smtp://relay1.example:587"])
    }
}
