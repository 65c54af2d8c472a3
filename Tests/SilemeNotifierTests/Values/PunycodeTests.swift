import Testing
import Values

@Suite("Punycode")
struct PunycodeTests {
    private static func scalars(_ values: [UInt32]) -> String {
        String(String.UnicodeScalarView(values.map { Unicode.Scalar($0)! }))
    }

    @Test("encodes the RFC 3492 §7.1 samples", arguments: [
        ("A Arabic (Egyptian)", scalars([
            0x0644, 0x064A, 0x0647, 0x0645, 0x0627, 0x0628, 0x062A, 0x0643, 0x0644,
            0x0645, 0x0648, 0x0634, 0x0639, 0x0631, 0x0628, 0x064A, 0x061F,
        ]), "egbpdaj6bu4bxfgehfvwxn"),
        ("B Chinese (simplified)", scalars([
            0x4ED6, 0x4EEC, 0x4E3A, 0x4EC0, 0x4E48, 0x4E0D, 0x8BF4, 0x4E2D, 0x6587,
        ]), "ihqwcrb4cv8a8dqg056pqjye"),
        ("C Chinese (traditional)", scalars([
            0x4ED6, 0x5011, 0x7232, 0x4EC0, 0x9EBD, 0x4E0D, 0x8AAA, 0x4E2D, 0x6587,
        ]), "ihqwctvzc91f659drss3x8bo0yb"),
        ("I Russian", scalars([
            0x043F, 0x043E, 0x0447, 0x0435, 0x043C, 0x0443, 0x0436, 0x0435, 0x043E, 0x043D,
            0x0438, 0x043D, 0x0435, 0x0433, 0x043E, 0x0432, 0x043E, 0x0440, 0x044F, 0x0442,
            0x043F, 0x043E, 0x0440, 0x0443, 0x0441, 0x0441, 0x043A, 0x0438,
        ]), "b1abfaaepdrnnbgefbadotcwatmq2g4l"),
        ("L 3年B組金八先生", "3年B組金八先生", "3B-ww4c5e180e575a65lsy2b"),
        ("S all basic", "-> $1.00 <-", "-> $1.00 <--"),
        ("bücher", "bücher", "bcher-kva"),
        ("例子", "例子", "fsqu00a"),
        ("中国", "中国", "fiqs8s"),
    ])
    func samples(name: String, input: String, expected: String) {
        #expect(Punycode.encode(input) == expected, "sample \(name)")
    }
}
