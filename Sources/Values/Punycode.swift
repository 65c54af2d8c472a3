/// Punycode (RFC 3492), the encoding of internationalized domain labels (`xn--…`).
package enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
    private static let initialBias = 72, initialN = 0x80

    /// Encodes one label (without the `xn--` prefix). Basic (ASCII) code points are copied as they
    /// are, case included; callers that want IDNA behaviour lowercase the label first.
    ///
    /// Arithmetic is done in `Int`: it cannot overflow for any label shorter than billions of
    /// scalars, far beyond the 63 octets a DNS label allows.
    package static func encode(_ input: String) -> String {
        let codePoints = input.unicodeScalars.map { Int($0.value) }
        var output = String(String.UnicodeScalarView(input.unicodeScalars.filter(\.isASCII)))
        let basicCount = output.unicodeScalars.count
        if basicCount > 0 { output.append("-") }

        var n = initialN, delta = 0, bias = initialBias, handled = basicCount
        while handled < codePoints.count {
            let m = codePoints.filter { $0 >= n }.min()!  // exists: some code point is unhandled
            delta += (m - n) * (handled + 1)
            n = m
            for c in codePoints {
                if c < n { delta += 1 }
                guard c == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, points: handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return output
    }

    private static func digit(_ d: Int) -> Character {
        Character(Unicode.Scalar(UInt8(d < 26 ? 0x61 + d : 0x30 + d - 26)))
    }

    private static func adapt(_ delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
