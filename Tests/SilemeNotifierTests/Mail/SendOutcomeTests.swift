import Testing
@testable import Mail

@Suite("SendOutcome.classify (docs/delivery.md's table)")
struct SendOutcomeTests {
    @Test("accepted only when curl says 0")
    func accepted() {
        #expect(SendOutcome.classify(curlCode: 0, responseCode: 250, reply: "250 OK", curlMessage: "") == .accepted(reply: "250 OK"))
    }

    @Test("a 4xx reply is transient, a 5xx reply permanent",
          arguments: [(55, 451, false), (55, 550, true), (8, 554, true), (8, 452, false), (56, 421, false)])
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
}
