import Testing
@testable import Mail

@Suite("SendOutcome.classify (docs/delivery.md's table)")
struct SendOutcomeTests {
    @Test("accepted only when curl says 0")
    func accepted() {
        #expect(SendOutcome.classify(curlCode: 0, responseCode: 250, reply: "250 OK", curlMessage: "") == .accepted(reply: "250 OK"))
    }

    @Test("a 4xx reply is transient, a 5xx reply permanent",
          arguments: [(55, 451, false), (55, 550, true), (8, 554, true), (8, 452, false), (56, 451, false)])
    func replies(curl: Int, response: Int, permanent: Bool) {
        let outcome = SendOutcome.classify(curlCode: curl, responseCode: response, reply: "\(response) x", curlMessage: "m")
        if permanent {
            #expect(outcome == .permanent(reply: "\(response) x"))
        } else {
            #expect(outcome == .transient(reason: "\(response) x", serverUnavailable: false))
        }
    }

    @Test("no final reply after the whole message went out: outcome unknown",
          arguments: [(56, 354), (28, 354), (55, 354), (56, 0)])
    func unknownAfterData(curl: Int, response: Int) {
        let outcome = SendOutcome.classify(curlCode: curl, responseCode: response, reply: nil, curlMessage: "Connection died",
                                           messageHandedOver: true)
        guard case .unknown(let reason) = outcome else {
            Issue.record("expected unknown, got \(outcome)")
            return
        }
        #expect(reason.hasPrefix("outcome unknown") && reason.contains("curl error \(curl)"))
        // A final reply after DATA is no mystery: 554 stays permanent, 451 transient.
        #expect(SendOutcome.classify(curlCode: 8, responseCode: 554, reply: "554 no", curlMessage: "", messageHandedOver: true)
                == .permanent(reply: "554 no"))
        #expect(SendOutcome.classify(curlCode: 8, responseCode: 451, reply: "451 later", curlMessage: "", messageHandedOver: true)
                == .transient(reason: "451 later", serverUnavailable: false))
    }

    @Test("transport, TLS and login failures are transient and mean the server is unusable",
          arguments: [(7, 0), (64, 250), (28, 0), (35, 0), (60, 0), (67, 535)])
    func transport(curl: Int, response: Int) {
        guard case .transient(_, let unavailable) = SendOutcome.classify(curlCode: curl, responseCode: response, reply: nil, curlMessage: "x") else {
            Issue.record("expected transient for curl \(curl)")
            return
        }
        #expect(unavailable)
    }

    @Test("the relay's refusals — 421 at any step, a refused greeting, EHLO or MAIL FROM — are the relay's, not the message's: transient, server unavailable",
          arguments: [(55, 421, "RCPT failed: 421"), (8, 421, ""), (55, 550, "MAIL failed: 550"), (55, 451, "MAIL failed: 451"),
                      (8, 554, "Got unexpected smtp-server response: 554"), (8, 554, "Remote access denied: 554")])
    func relayRefusals(curl: Int, response: Int, message: String) {
        let outcome = SendOutcome.classify(curlCode: curl, responseCode: response, reply: "\(response) x", curlMessage: message)
        #expect(outcome == .transient(reason: "\(response) x", serverUnavailable: true), "\(message)")
        #expect(outcome.isRelayFailure)
    }

    @Test("what says something of the message is never the relay's: a refused recipient or message, an unknown outcome, an acceptance")
    func notRelayFailures() {
        let outcomes: [SendOutcome] = [
            SendOutcome.classify(curlCode: 55, responseCode: 550, reply: "550 5.1.1 no such user", curlMessage: "RCPT failed: 550"),
            SendOutcome.classify(curlCode: 55, responseCode: 451, reply: "451 4.7.1 greylisted", curlMessage: "RCPT failed: 451"),
            SendOutcome.classify(curlCode: 8, responseCode: 554, reply: "554 5.7.1 spam", curlMessage: "Weird server reply", messageHandedOver: true),
            SendOutcome.classify(curlCode: 56, responseCode: 354, reply: nil, curlMessage: "Connection died", messageHandedOver: true),
            SendOutcome.classify(curlCode: 0, responseCode: 250, reply: "250 OK", curlMessage: ""),
        ]
        for outcome in outcomes { #expect(!outcome.isRelayFailure, "\(outcome)") }
        #expect(SendOutcome.classify(curlCode: 7, responseCode: 0, reply: nil, curlMessage: "Failed to connect").isRelayFailure)
        #expect(SendOutcome.classify(curlCode: 67, responseCode: 535, reply: "535 auth", curlMessage: "Login denied").isRelayFailure)
    }
}
