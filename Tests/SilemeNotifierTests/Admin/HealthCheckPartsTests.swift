import Config
import Testing
import Values
@testable import Admin

/// `check`'s lines and the exit status their failures make — without a server.
@Suite("check's parts")
struct HealthCheckPartsTests {
    typealias Finding = HealthCheck.Finding

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
}
