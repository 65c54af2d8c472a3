import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failed step of an outbox write: the `errno` and the step, for the reason text.
struct OutboxFailure: Error {
    /// The `errno` value.
    let code: Int32
    /// Which call failed (`open`, `write`, `fsync`, `rename`, ...).
    let step: String

    init(_ code: Int32, _ step: String) {
        self.code = code
        self.step = step
    }

    /// The system's text for the error (`No space left on device`).
    var text: String { String(cString: strerror(code)) }
}
