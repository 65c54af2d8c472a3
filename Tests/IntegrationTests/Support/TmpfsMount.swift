import Foundation

/// A small `tmpfs` mounted on a fresh folder for one test, to make a real full or read-only file
/// system. Mounting needs root (the tests run as root locally and in CI); when it fails the test
/// fails with the reason — it never skips.
final class TmpfsMount {
    /// The mount point.
    let path: String
    private var mounted = false

    /// Mounts a `tmpfs` of `size` (`mount`'s syntax: `64k`, `1m`) on a new folder.
    init(size: String) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("sn-tmpfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        do {
            try Self.mount(["-t", "tmpfs", "-o", "size=\(size),mode=0755", "tmpfs", path])
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
        mounted = true
    }

    /// Remounts read-only or read-write.
    func remount(readOnly: Bool) throws {
        try Self.mount(["-o", "remount,\(readOnly ? "ro" : "rw")", path])
    }

    /// Free space for an unprivileged writer: (blocks, block size).
    func free() throws -> (blocks: Int, blockSize: Int) {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw TestFailure("statvfs \(path): \(String(cString: strerror(errno)))") }
        return (Int(info.f_bavail), Int(info.f_bsize))
    }

    /// Fills the file system with `name` until only `blocks` blocks are left free.
    func fill(leaving blocks: Int, name: String = "filler") throws {
        let (free, size) = try free()
        guard free > blocks else { throw TestFailure("tmpfs has only \(free) free blocks") }
        let data = Data(count: (free - blocks) * size)
        guard FileManager.default.createFile(atPath: "\(path)/\(name)", contents: data) else {
            throw TestFailure("cannot write the filler file in \(path)")
        }
    }

    /// Unmounts and removes the folder (for a `defer`; failures are reported on stderr).
    func unmount() {
        guard mounted else { return }
        do {
            try Self.mount(["-l", path], command: "/bin/umount")
            mounted = false
            try FileManager.default.removeItem(atPath: path)
        } catch {
            FileHandle.standardError.write(Data("TmpfsMount: \(error)\n".utf8))
        }
    }

    deinit { unmount() }

    private static func mount(_ arguments: [String], command: String = "/bin/mount") throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command)
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("\(command) \(arguments.joined(separator: " ")) failed (the outbox fault tests need root): \(message)")
        }
    }
}
