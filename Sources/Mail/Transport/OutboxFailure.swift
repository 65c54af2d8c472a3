import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failed step of an outbox write: the `errno` and the step, for the reason text.
package struct OutboxFailure: Error {
    /// The `errno` value.
    package let code: Int32
    /// Which call failed (`open`, `write`, `fsync`, `rename`, ...).
    package let step: String

    package init(_ code: Int32, _ step: String) {
        self.code = code
        self.step = step
    }

    /// The system's text for the error (`No space left on device`).
    package var text: String { String(cString: strerror(code)) }
}
