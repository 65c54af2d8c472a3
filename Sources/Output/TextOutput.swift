import Foundation

/// A buffered writer to a file descriptor (standard output for reports).
package final class TextOutput {
    private var buffer: [UInt8] = []
    private let descriptor: Int32

    /// Writes to `descriptor` (default: standard output).
    package init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
        buffer.reserveCapacity(1 << 16)
    }

    deinit { flush() }

    /// Appends `text`, flushing when the buffer is full.
    package func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes out everything buffered.
    package func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer[offset...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written <= 0 { if errno == EINTR { continue } else { break } }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
