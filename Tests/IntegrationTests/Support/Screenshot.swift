import Foundation

/// The pixels of a PNG screenshot, decoded by Debian's Python 3 with nothing but `zlib` and
/// `struct` from its standard library (8-bit RGB or RGBA, not interlaced: what Chromium writes).
struct Screenshot {
    let width: Int
    let height: Int
    /// RGB, row by row.
    private let pixels: [UInt8]

    /// A colour as `#rrggbb`.
    typealias Color = String

    /// Decodes `path`.
    init(png path: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.decoder, path]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        nonisolated(unsafe) var errors = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errors = err.fileHandleForReading.readDataToEndOfFile() }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let newline = data.firstIndex(of: 10) else {
            throw TestFailure("cannot decode \(path): \(String(decoding: errors, as: UTF8.self))")
        }
        let size = String(decoding: data[..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        width = size[0]
        height = size[1]
        pixels = [UInt8](data[(newline + 1)...])
        guard pixels.count == width * height * 3 else { throw TestFailure("short pixel data in \(path)") }
    }

    /// The colour at `(x, y)`.
    func color(_ x: Int, _ y: Int) -> Color {
        let i = (y * width + x) * 3
        return String(format: "#%02x%02x%02x", pixels[i], pixels[i + 1], pixels[i + 2])
    }

    /// Whether `(x, y)` has exactly `color` (e.g. `#2e7d32`).
    func pixel(_ x: Int, _ y: Int, is color: Color) -> Bool { pixel(x, y, is: Self.rgb(color)) }

    private func pixel(_ x: Int, _ y: Int, is rgb: (UInt8, UInt8, UInt8)) -> Bool {
        let i = (y * width + x) * 3
        return pixels[i] == rgb.0 && pixels[i + 1] == rgb.1 && pixels[i + 2] == rgb.2
    }

    private static func rgb(_ color: Color) -> (UInt8, UInt8, UInt8) {
        let value = Int(color.dropFirst(), radix: 16)!
        return (UInt8(value >> 16), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF))
    }

    /// The boxes of the separate areas of `color`: rows holding at least `minimum` pixels of it are
    /// grouped into runs of rows no more than `gap` rows apart (so that a thin line drawn across an
    /// area does not split it); each run's box spans its first to last such pixel.
    func areas(of color: Color, minimum: Int = 50, gap: Int = 3) -> [(x0: Int, y0: Int, x1: Int, y1: Int)] {
        var boxes: [(x0: Int, y0: Int, x1: Int, y1: Int)] = []
        var current: (x0: Int, y0: Int, x1: Int, y1: Int)?
        let rgb = Self.rgb(color)
        for y in 0..<height {
            var count = 0, low = width, high = -1
            for x in 0..<width where pixel(x, y, is: rgb) {
                count += 1
                low = min(low, x)
                high = max(high, x)
            }
            if count >= minimum {
                if let box = current, y - box.y1 <= gap {
                    current = (min(box.x0, low), box.y0, max(box.x1, high), y)
                } else {
                    if let box = current { boxes.append(box) }
                    current = (low, y, high, y)
                }
            }
        }
        if let box = current { boxes.append(box) }
        return boxes
    }

    /// How many pixels of `color` column `x` has between rows `y0` and `y1` (inclusive), and the
    /// topmost and bottommost of them.
    func run(of color: Color, x: Int, y0: Int, y1: Int) -> (count: Int, top: Int?, bottom: Int?) {
        var count = 0
        var top: Int?, bottom: Int?
        let rgb = Self.rgb(color)
        for y in max(0, y0)...min(height - 1, y1) where pixel(x, y, is: rgb) {
            count += 1
            top = top ?? y
            bottom = y
        }
        return (count, top, bottom)
    }

    /// PNG → "width height\n" + RGB bytes on standard output.
    private static let decoder = #"""
        import struct, sys, zlib
        data = open(sys.argv[1], "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
        pos, idat = 8, b""
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            pos += 12 + length
            if kind == b"IHDR":
                width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
                assert depth == 8 and ctype in (2, 6) and interlace == 0, "unsupported PNG"
            elif kind == b"IDAT":
                idat += body
        raw = zlib.decompress(idat)
        bpp = 3 if ctype == 2 else 4
        stride = width * bpp
        out = bytearray()
        prev = bytearray(stride)
        i = 0
        for _ in range(height):
            f = raw[i]; i += 1
            line = bytearray(raw[i:i + stride]); i += stride
            if f == 1:
                for x in range(bpp, stride): line[x] = (line[x] + line[x - bpp]) & 255
            elif f == 2:
                for x in range(stride): line[x] = (line[x] + prev[x]) & 255
            elif f == 3:
                for x in range(stride): line[x] = (line[x] + (((line[x - bpp] if x >= bpp else 0) + prev[x]) >> 1)) & 255
            elif f == 4:
                for x in range(stride):
                    a = line[x - bpp] if x >= bpp else 0
                    b = prev[x]
                    c = prev[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[x] = (line[x] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 255
            out += line if bpp == 3 else bytes(v for k, v in enumerate(line) if k % 4 != 3)
            prev = line
        sys.stdout.buffer.write(b"%d %d\n" % (width, height) + bytes(out))
        """#
}
