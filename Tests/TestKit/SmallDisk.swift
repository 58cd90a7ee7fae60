import Foundation

/// A small tmpfs (needs root, as these test machines are) to fill up on purpose.
public final class SmallDisk: @unchecked Sendable {
    public let path: String
    private let directory: TemporaryDirectory
    private var mounted = false

    public init(megabytes: Int) async throws {
        directory = try TemporaryDirectory("smalldisk")
        path = directory.path
        let mount = try ManagedProcess(name: "mount", executable: Tools.find("mount"),
                                       arguments: ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard await mount.waitForExit(timeout: 10) == 0 else { throw WaitTimeout(description: "mount tmpfs failed: \(mount.text)") }
        mounted = true
    }

    /// Writes a filler file until the disk is full.
    public func fill() throws {
        let fd = open(path + "/filler", O_WRONLY | O_CREAT, 0o644)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0xAB, count: 4096)
        while write(fd, chunk, chunk.count) > 0 {}
    }

    public func free() {
        unlink(path + "/filler")
    }

    deinit {
        if mounted { _ = try? ManagedProcess(name: "umount", executable: Tools.find("umount"), arguments: ["-l", path]).stop(timeout: 5) }
    }
}
