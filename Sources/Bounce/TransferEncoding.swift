/// Undoing a body's `Content-Transfer-Encoding` (RFC 2045 §6), leniently: reports are written by
/// many MTAs, and a stray character must not lose the rest of a delivery status.
enum TransferEncoding {
    /// base64: characters outside the alphabet (line breaks, blanks) are skipped, decoding stops
    /// at `=`, and a trailing partial group yields the whole bytes it holds.
    static func base64(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3 / 4)
        var buffer: UInt32 = 0, bits = 0
        for byte in bytes {
            let value: UInt32
            switch byte {
            case 0x41...0x5A: value = UInt32(byte - 0x41)
            case 0x61...0x7A: value = UInt32(byte - 0x61 + 26)
            case 0x30...0x39: value = UInt32(byte - 0x30 + 52)
            case 0x2B: value = 62
            case 0x2F: value = 63
            case 0x3D: return out
            default: continue
            }
            buffer = (buffer << 6) | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }

    /// quoted-printable: `=XX` is the byte XX, `=` at a line's end joins it to the next (a soft
    /// break), blanks at a line's end are dropped; a malformed `=` is kept as written.
    static func quotedPrintable(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var lineStart = bytes.startIndex
        while lineStart < bytes.endIndex {
            let lineEnd = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.endIndex
            var line = bytes[lineStart..<lineEnd]
            let hadBreak = lineEnd < bytes.endIndex
            if line.last == 0x0D { line.removeLast() }
            while let last = line.last, last == 0x20 || last == 0x09 { line.removeLast() }
            var soft = false
            var index = line.startIndex
            while index < line.endIndex {
                let byte = line[index]
                if byte == 0x3D {
                    if index + 1 == line.endIndex { soft = true; break }
                    if index + 2 < line.endIndex, let high = hex(line[index + 1]), let low = hex(line[index + 2]) {
                        out.append(high << 4 | low)
                        index += 3
                        continue
                    }
                }
                out.append(byte)
                index += 1
            }
            if hadBreak && !soft { out.append(0x0A) }
            lineStart = lineEnd + 1
        }
        return out
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
