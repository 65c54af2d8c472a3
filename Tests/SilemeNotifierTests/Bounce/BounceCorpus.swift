import Foundation

/// The corpus of real bounce messages (Fixtures/bounces, its README says where each comes from).
enum BounceCorpus {
    /// The folder of the corpus in the test bundle.
    static var folder: URL { Bundle.module.resourceURL!.appendingPathComponent("Fixtures/bounces") }

    /// Every message's file name, sorted.
    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
    }

    /// The bytes of the message `name`.
    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }
}
